// The package's own worker entry with its requests reported to the page: the fetch log goes in first
// (imports evaluate in order), then the real entry exposes the engine. Passed as `createSyncClient({ worker })`.
import './fetch-log.ts';
import '../../../worker/entry.ts';
