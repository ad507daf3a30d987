// Splits a byte stream into text lines. Multi-byte characters split across chunks are kept whole,
// and a runaway line without newline is cut at maxLineBytes so one CLI cannot exhaust memory.
import { StringDecoder } from 'node:string_decoder';

export const MAX_LINE_CHARS = 1024 * 1024;

export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';

  constructor(
    private readonly onLine: (line: string, truncated: boolean) => void,
    private readonly maxLineChars = MAX_LINE_CHARS,
  ) {}

  push(chunk: Buffer | string): void {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let newline = this.buffer.indexOf('\n');
    while (newline !== -1) {
      this.emit(this.buffer.slice(0, newline));
      this.buffer = this.buffer.slice(newline + 1);
      newline = this.buffer.indexOf('\n');
    }
    if (this.buffer.length > this.maxLineChars) {
      this.onLine(this.buffer.slice(0, this.maxLineChars), true);
      this.buffer = '';
    }
  }

  end(): void {
    this.buffer += this.decoder.end();
    if (this.buffer.length > 0) this.emit(this.buffer);
    this.buffer = '';
  }

  private emit(line: string): void {
    const clean = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (clean.length > 0) this.onLine(clean, false);
  }
}
