// Loaded before the engine in a worker variant: the worker has no Web Locks, as in Safari before 15.4 or a page
// that is not a secure context (where `navigator.locks` is undefined).
Object.defineProperty(Object.getPrototypeOf(navigator) as object, 'locks', { configurable: true, get: () => undefined });
