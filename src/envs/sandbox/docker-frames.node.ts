/** Which of the exec's output streams a payload came from. */
export type OutputStream = "stdout" | "stderr";

/**
 * Splits the Engine's multiplexed exec stream (Tty false) into stdout and stderr: each frame is
 * an 8-byte header (stream byte 1 or 2, three zero bytes, payload size as big-endian uint32)
 * then the payload. Payload bytes are passed on as they arrive, never held until a frame is
 * whole, so a command that claims a 4 GiB frame costs no memory here.
 *
 * @example
 * const demux = new FrameDemuxer((stream, bytes) => collect(stream, bytes));
 * socket.on("data", (chunk) => demux.push(chunk));
 */
export class FrameDemuxer {
  private header = Buffer.alloc(8);
  private headerFill = 0;
  private remaining = 0;
  private current: OutputStream = "stdout";

  constructor(private readonly onBytes: (stream: OutputStream, bytes: Buffer) => void) {}

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - at);
        this.onBytes(this.current, chunk.subarray(at, at + take));
        this.remaining -= take;
        at += take;
        continue;
      }
      const take = Math.min(8 - this.headerFill, chunk.length - at);
      chunk.copy(this.header, this.headerFill, at, at + take);
      this.headerFill += take;
      at += take;
      if (this.headerFill < 8) return;
      this.headerFill = 0;
      // Stream 0 (stdin) never comes back; anything but 2 is read as stdout.
      this.current = this.header[0] === 2 ? "stderr" : "stdout";
      this.remaining = this.header.readUInt32BE(4);
    }
  }
}
