// Loaded before the engine in a worker variant: the worker has no BroadcastChannel either.
Reflect.deleteProperty(globalThis, 'BroadcastChannel');
