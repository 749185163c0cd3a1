// React: useSyncExternalStore over the store; rows are memoized, and unchanged rows keep their identity.
import { memo, useSyncExternalStore } from 'react';
import { createRoot } from 'react-dom/client';
import { store } from '../shared.ts';

const Row = memo(({ s }) => (
  <li data-guid={s.guid} data-subscribed={String(s.isSubscribed)}>
    {s.feedUrl}
  </li>
));

function App() {
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot);
  if (!snap.ready) return null;
  return (
    <>
      <p id="status" data-network={snap.status.network}>{snap.status.phase}</p>
      <ul id="list">{snap.subscriptions.map((s) => <Row key={s.guid} s={s} />)}</ul>
    </>
  );
}

createRoot(document.getElementById('app')).render(<App />);
