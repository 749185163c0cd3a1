// Solid: from() takes the store as it is; <For> keeps the DOM of rows whose object did not change.
import { For, Show, from } from 'solid-js';
import { render } from 'solid-js/web';
import { store } from '../shared.ts';

function App() {
  const snap = from(store);
  return (
    <Show when={snap()?.ready}>
      <p id="status" data-network={snap().status.network}>{snap().status.phase}</p>
      <ul id="list">
        <For each={snap().subscriptions}>
          {(s) => (
            <li data-guid={s.guid} data-subscribed={String(s.isSubscribed)}>
              {s.feedUrl}
            </li>
          )}
        </For>
      </ul>
    </Show>
  );
}

render(() => <App />, document.getElementById('app'));
