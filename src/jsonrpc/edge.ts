import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The HTTP edge every JSON-RPC server of the project shares (the gateway, the prover host, the
 * devnet): reading a body under a size limit and answering JSON. Parsing, batches, codes and id
 * echo are protocol.ts's `handleText` for all of them (the prover host in jsonrpsee's wording).
 * zod failures become -32602 messages with `parseParam` (src/schemas/issue.ts).
 */

/** Sends a JSON text (or an empty 204 when `body` is null). */
export function replyJson(response: ServerResponse, status: number, body: string | null, headers: Record<string, string> = {}): void {
  if (body === null) {
    response.writeHead(status === 200 ? 204 : status, headers).end();
    return;
  }
  response
    .writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
    .end(body);
}

/**
 * Reads a request body of at most `maxBodyBytes`. A body over the limit (declared in
 * content-length or found while reading) is answered 413 with `tooLarge()` at once and the rest
 * is read and discarded, so a client still sending reads the answer instead of a reset
 * connection; past 16 times the limit the connection is closed rather than drained.
 * Resolves with the body, or `undefined` when it was refused (already answered) or broken off.
 */
export function readBody(
  request: IncomingMessage,
  response: ServerResponse,
  maxBodyBytes: number,
  tooLarge: () => string,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const drainLimit = maxBodyBytes * 16;
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > maxBodyBytes) {
      if (declared > drainLimit) response.setHeader('connection', 'close');
      replyJson(response, 413, tooLarge());
      request.resume();
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let aborted = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (aborted) {
        if (size > drainLimit) request.destroy();
        return;
      }
      if (size > maxBodyBytes) {
        aborted = true;
        chunks.length = 0;
        replyJson(response, 413, tooLarge());
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    request.on('error', () => {
      aborted = true;
      resolve(undefined);
    });
    request.on('end', () => {
      if (!aborted) resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** Listens on a free loopback port (an EVM's private JSON-RPC endpoint) and gives the server's URL. */
export async function listenOnLoopback(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
