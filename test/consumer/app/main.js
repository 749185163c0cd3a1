// A throwaway app that installs opa-sync (packed tarball, git URL or file: folder) and is built with its own `vite build`.
// The server and token come from the query string so one build works against any reference server.
import { createSyncClient } from 'opa-sync';

const params = new URLSearchParams(location.search);

async function main() {
  const client = createSyncClient({
    baseUrl: params.get('server'),
    auth: { type: 'bearer', token: params.get('token') },
    pullInterval: 0,
  });
  await client.sync();
  const subscriptions = await client.subscriptions();
  document.getElementById('count').textContent = String(subscriptions.length);
}

main().catch((error) => {
  document.getElementById('error').textContent = `${error?.name}: ${error?.code ?? ''} ${error?.message}`;
});
