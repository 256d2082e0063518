import { connect } from 'node:net';

/**
 * A minimal ApiVersions v0 exchange, written out by hand so that the launcher depends on nothing
 * but Node: it answers "is a Kafka broker serving on this port?" without our own codec (which is
 * what the broker is there to test).
 *
 * Request:  int32 size | int16 api_key=18 | int16 api_version=0 | int32 correlation_id | int16 len + client_id
 * Response: int32 size | int32 correlation_id | int16 error_code | int32 count | count x (int16 key, int16 min, int16 max)
 */
export interface ApiVersionRange {
  readonly apiKey: number;
  readonly minVersion: number;
  readonly maxVersion: number;
}

export async function probeApiVersions(host: string, port: number, timeoutMs = 2_000): Promise<ApiVersionRange[]> {
  const clientId = Buffer.from('kwire-broker-probe');
  const correlationId = 0x6b77; // "kw"
  const request = Buffer.alloc(4 + 2 + 2 + 4 + 2 + clientId.length);
  let o = request.writeInt32BE(request.length - 4, 0);
  o = request.writeInt16BE(18, o);
  o = request.writeInt16BE(0, o);
  o = request.writeInt32BE(correlationId, o);
  o = request.writeInt16BE(clientId.length, o);
  clientId.copy(request, o);

  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    let received = 0;
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error(`no ApiVersions answer from ${host}:${port} within ${timeoutMs} ms`)), timeoutMs);
    socket.once('error', (err) => {
      clearTimeout(timer);
      fail(err);
    });
    socket.once('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received < 4) return;
      const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      const size = all.readInt32BE(0);
      if (size < 10 || size > 1 << 20) {
        clearTimeout(timer);
        fail(new Error(`${host}:${port} answered with a frame of ${size} bytes: not a Kafka ApiVersions response`));
        return;
      }
      if (all.length < 4 + size) return;
      clearTimeout(timer);
      socket.end();
      try {
        resolve(parseApiVersionsV0(all.subarray(4, 4 + size), correlationId));
      } catch (err) {
        reject(err);
      }
    });
  });
}

function parseApiVersionsV0(frame: Buffer, correlationId: number): ApiVersionRange[] {
  if (frame.readInt32BE(0) !== correlationId) throw new Error('ApiVersions answer carries the wrong correlation id');
  const errorCode = frame.readInt16BE(4);
  if (errorCode !== 0) throw new Error(`ApiVersions answered with error code ${errorCode}`);
  const count = frame.readInt32BE(6);
  if (count < 0 || 10 + count * 6 > frame.length) throw new Error(`ApiVersions answer lists ${count} APIs in ${frame.length} bytes`);
  const ranges: ApiVersionRange[] = [];
  for (let i = 0, o = 10; i < count; i++, o += 6) {
    ranges.push({ apiKey: frame.readInt16BE(o), minVersion: frame.readInt16BE(o + 2), maxVersion: frame.readInt16BE(o + 4) });
  }
  return ranges;
}
