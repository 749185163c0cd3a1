// The feed-URL rule lives with the page's code (OPML import reads it there too); the engine's parts import it here.
export { feedUrlOf } from '../src/feed-url.ts';
