// The connection panel: base URL and token (remembered), connect / disconnect (close the client),
// new token (`setAuth`), clear local data (`clear()`).
import { byId } from './dom.ts';
import type { Log } from './log.ts';
import { authOf, type Session } from './session.ts';
import { loadSettings, saveSettings, DEFAULT_PAGE_SIZE, type Settings } from './settings.ts';

export async function createConnectPanel(session: Session, log: Log): Promise<void> {
  const form = byId<HTMLFormElement>('connect-form');
  const protocol = byId<HTMLSelectElement>('protocol');
  const baseUrl = byId<HTMLInputElement>('base-url');
  const token = byId<HTMLInputElement>('token');
  const username = byId<HTMLInputElement>('username');
  const password = byId<HTMLInputElement>('password');
  const pageSize = byId<HTMLInputElement>('page-size');
  const backgroundSync = byId<HTMLInputElement>('background-sync');
  const connect = byId<HTMLButtonElement>('connect');
  const disconnect = byId<HTMLButtonElement>('disconnect');
  const useToken = byId<HTMLButtonElement>('use-token');
  const clear = byId<HTMLButtonElement>('clear-local');
  const state = byId('connection-state');

  const read = (connected: boolean): Settings => ({
    protocol: protocol.value === 'gpodder' || protocol.value === 'nextcloud' ? protocol.value : 'opa',
    baseUrl: baseUrl.value.trim(),
    token: token.value,
    username: username.value,
    password: password.value,
    pageSize: Math.max(1, Math.floor(Number(pageSize.value)) || DEFAULT_PAGE_SIZE),
    backgroundSync: backgroundSync.checked,
    connected,
  });

  function show(connected: boolean): void {
    connect.hidden = connected;
    disconnect.hidden = !connected;
    useToken.disabled = !connected;
    clear.disabled = !connected;
    // Read-only rather than disabled: still legible and selectable; changing them needs a new client.
    baseUrl.readOnly = connected;
    pageSize.readOnly = connected;
    backgroundSync.disabled = connected;
    protocol.disabled = connected;
    showAuthFields();
    const c = session.connection;
    state.textContent = c ? `Connected to ${c.settings.baseUrl}` : 'Not connected. Local data stays in this browser until you clear it.';
    state.dataset.connected = String(connected);
  }

  /** A bearer token for OPA; a username and password for the gPodder protocols. */
  function showAuthFields(): void {
    const basic = protocol.value !== 'opa';
    for (const field of document.querySelectorAll<HTMLElement>('[data-auth]')) field.hidden = (field.dataset.auth === 'basic') !== basic;
  }
  protocol.addEventListener('change', showAuthFields);

  function open(): void {
    const settings = read(true);
    try {
      new URL(settings.baseUrl);
    } catch {
      log.add('error', `not a URL: ${settings.baseUrl}`);
      baseUrl.focus();
      return;
    }
    try {
      session.connect(settings);
      void saveSettings(settings);
    } catch (error) {
      log.error('connecting', error);
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!session.connection) open();
  });
  disconnect.addEventListener('click', async () => {
    disconnect.disabled = true;
    await session.disconnect().catch((error: unknown) => log.error('disconnecting', error));
    disconnect.disabled = false;
    void saveSettings(read(false));
  });
  useToken.addEventListener('click', async () => {
    const client = session.connection?.client;
    if (!client) return;
    try {
      await client.setAuth(authOf(read(true)));
      log.add('action', 'new credentials sent to the worker (setAuth); a queue paused by 401 resumes');
      void saveSettings(read(true));
    } catch (error) {
      log.error('setAuth', error);
    }
  });
  clear.addEventListener('click', async () => {
    const client = session.connection?.client;
    if (!client) return;
    clear.disabled = true;
    try {
      await client.clear();
      log.add('action', 'local data cleared (clear()); press Sync now to pull everything again');
    } catch (error) {
      log.error('clear', error);
    } finally {
      clear.disabled = false;
    }
  });

  session.on((event) => {
    if (event.type === 'connected' || event.type === 'disconnected') show(event.type === 'connected');
  });

  const saved = await loadSettings();
  protocol.value = saved.protocol;
  baseUrl.value = saved.baseUrl;
  token.value = saved.token;
  username.value = saved.username;
  password.value = saved.password;
  pageSize.value = String(saved.pageSize);
  backgroundSync.checked = saved.backgroundSync;
  show(false);
  if (saved.connected) open();
}
