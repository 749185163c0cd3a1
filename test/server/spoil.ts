import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultRule } from './faults.ts';
import { corsHeaders, replyText, send, statusText, type Reply } from './http.ts';

const DEFAULT_BROKEN = '{"total":1,"page":1,"per_page":50,"subscriptions":[{"feed_url":"https://';

/** Answer with `rule` instead of (or on top of, after handling) the real `reply`; returns the status sent. */
export function spoil(
  req: IncomingMessage,
  res: ServerResponse,
  rule: FaultRule,
  reply: Reply | undefined,
  codeAsString: boolean,
  cors = true,
): number {
  const real = reply && replyText(reply, codeAsString);
  if (rule.kind === 'fail') {
    const status = rule.status ?? 500;
    const headers: Record<string, string> = {};
    if (rule.retryAfter !== undefined) headers['Retry-After'] = String(rule.retryAfter);
    if (rule.body !== undefined) {
      send(req, res, status, rule.body, headers, rule.contentType ?? 'text/plain; charset=utf-8', cors);
    } else {
      send(req, res, status, replyText({ status, error: statusText(status) }, codeAsString), headers, rule.contentType, cors);
    }
    return status;
  }
  const status = reply?.status ?? 200;
  if (rule.kind === 'malform') {
    const broken = rule.body ?? (real && real.length > 1 ? real.slice(0, Math.ceil(real.length / 2)) : DEFAULT_BROKEN);
    send(req, res, status, broken, {}, undefined, cors);
    return status;
  }
  // drop: promise the whole body, send half of it, then cut the connection.
  const whole = real && real.length > 1 ? real : `${DEFAULT_BROKEN}example.example/feed.xml"}]}`;
  res.writeHead(status, {
    ...(cors ? corsHeaders(req) : {}),
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(whole),
  });
  res.write(whole.slice(0, Math.floor(whole.length / 2)), () => res.socket?.destroy());
  return status;
}
