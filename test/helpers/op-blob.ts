const blobSizeBytes = 131_072;

/**
 * The blob encoding as the spec writes it (specs/protocol/ecotone/derivation.md, "Blob Encoding":
 * the `read`/`write` pseudocode, the batcher's side), to give the decoder blobs to read. The Go
 * peer holds the decoder against op-service's own encoder.
 */
export function specBlob(data: Uint8Array): Uint8Array {
  const stream = new Uint8Array(1024 * 127);
  stream.set([0, (data.length >> 16) & 0xff, (data.length >> 8) & 0xff, data.length & 0xff]);
  stream.set(data, 4);
  const blob = new Uint8Array(blobSizeBytes);
  let read = 0;
  let write = 0;
  const take = (n: number) => stream.subarray(read, (read += n));
  const put = (byte: number, tail: Uint8Array) => {
    blob[write] = byte;
    blob.set(tail, write + 1);
    write += 32;
  };
  for (let round = 0; round < 1024; round++) {
    const tailA = take(31);
    const x = take(1)[0]!;
    put(x & 0b0011_1111, tailA);
    const tailB = take(31);
    const y = take(1)[0]!;
    put((y & 0b0000_1111) | ((x & 0b1100_0000) >> 2), tailB);
    const tailC = take(31);
    const z = take(1)[0]!;
    put(z & 0b0011_1111, tailC);
    const tailD = take(31);
    put(((z & 0b1100_0000) >> 2) | ((y & 0b1111_0000) >> 4), tailD);
  }
  return blob;
}
