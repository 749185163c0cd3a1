// How each real server words its answers: body format, error bodies, the 401 challenge.
import type { Reply } from '../http.ts';

/** The answers one server gives. */
export interface Voice {
  ok(body: unknown): Reply;
  /** A 200 whose body is the status message (opodsync's "Device updated", mygpo's empty body). */
  done(message: string): Reply;
  error(status: number, message: string): Reply;
  unauthorized(message: string): Reply;
  /** A 500 where the real server crashes (an uncaught exception); `message` is "Kind: detail". */
  crash(message: string): Reply;
}

const JSON_TYPE = 'application/json';
// PHP's json_encode escapes every slash; only strings hold slashes in JSON text, so this stays valid.
const phpJson = (value: unknown, indent?: number): string => JSON.stringify(value, null, indent).replace(/\//g, '\\/');

const TEXT = 'text/plain; charset=utf-8';
const HTML = 'text/html; charset=utf-8';

/** gpodder.net (Django): compact JSON, plain-text errors, an empty 401 with a Basic challenge. */
export const mygpoVoice: Voice = {
  ok: (body) => ({ status: 200, text: JSON.stringify(body), contentType: JSON_TYPE }),
  done: () => ({ status: 200, text: '', contentType: 'text/html; charset=utf-8' }),
  error: (status, message) => ({ status, text: message, contentType: 'text/html; charset=utf-8' }),
  unauthorized: () => ({ status: 401, text: '', contentType: 'text/html; charset=utf-8', headers: { 'WWW-Authenticate': 'Basic realm=""' } }),
  // Django with DEBUG off: its stock page, the reason only in the server's log.
  crash: () => ({ status: 500, text: '<h1>Server Error (500)</h1>', contentType: HTML }),
};

/** opodsync: pretty-printed PHP JSON, `{code, message}` for errors and notices alike. */
export const opodsyncVoice: Voice = {
  ok: (body) => ({ status: 200, text: phpJson(body, 4), contentType: JSON_TYPE }),
  done: (message) => ({ status: 200, text: phpJson({ code: 200, message }, 4), contentType: JSON_TYPE }),
  error: (status, message) => ({ status, text: phpJson({ code: status, message }, 4), contentType: JSON_TYPE }),
  unauthorized: (message) => ({
    status: 401,
    text: phpJson({ code: 401, message }, 4),
    contentType: JSON_TYPE,
    headers: { 'WWW-Authenticate': 'Basic realm="Please login"' },
  }),
  // KD2's ErrorManager: a plain-text report headed by the exception's class.
  crash(message) {
    const colon = message.indexOf(': ');
    const [kind, detail] = colon < 0 ? ['Exception', message] : [message.slice(0, colon), message.slice(colon + 2)];
    return { status: 500, text: ` /!\\ ${kind} \n${detail}\n`, contentType: TEXT };
  },
};

/** The Nextcloud gPodder Sync app: compact PHP JSON, `{message}` errors. */
export const nextcloudVoice: Voice = {
  ok: (body) => ({ status: 200, text: phpJson(body), contentType: `${JSON_TYPE}; charset=utf-8` }),
  done: (message) => nextcloudVoice.ok({ message }),
  error: (status, message) => ({ status, text: phpJson({ message }), contentType: `${JSON_TYPE}; charset=utf-8` }),
  unauthorized: () => ({
    status: 401,
    text: phpJson({ message: 'Current user is not logged in' }),
    contentType: `${JSON_TYPE}; charset=utf-8`,
    headers: { 'WWW-Authenticate': 'Basic realm="Nextcloud"' },
  }),
  // An exception the app does not catch: Nextcloud's error page, the reason only in its log.
  crash: () => ({ status: 500, text: 'Internal Server Error', contentType: HTML }),
};
