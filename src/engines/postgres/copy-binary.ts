/**
 * Incremental decoder of PostgreSQL's binary COPY format (`COPY (SELECT …) TO STDOUT (FORMAT binary)`;
 * protocol docs "COPY file formats", binary): an 11-byte signature, int32 flags, int32 header
 * extension length and its bytes; then per tuple an int16 field count and per field an int32
 * length (-1: NULL) and its bytes; an int16 -1 ends the stream.
 *
 * Fed the chunks a driver reads, split anywhere. A value inside one chunk is decoded in place; a
 * value that spans chunks is gathered once into a buffer of its announced length, so every byte is
 * copied at most once and the work is linear in the bytes, whatever the chunk sizes and value sizes
 * (a multi-MB text in 64 KiB chunks costs one allocation and one copy of each chunk).
 *
 * Rows come out as arrays of values (values.ts) in batches that end at `batchRows` rows or once
 * their text, blob and list values hold `batchMaxBytes` bytes, whichever comes first: the SQLite
 * engine's rule (db/protocol.ts BATCH_ROWS, BATCH_MAX_BYTES; DESIGN.md §14 "streamed").
 */
import { ServerError } from "../../errors.ts";
import { BATCH_MAX_BYTES, batchRowsFor } from "../../results/batches.ts";
import { PgValueRefused, Refusal } from "./value-refusal.ts";
import type { DecodeColumn } from "./types.ts";
import { valueDecoder, WireMismatch, type ValueDecoder } from "./decode-values.ts";
import type { EncoderColumn } from "../../arrow/encode.ts";
import { arrowBatch, arrowDirect, columnBuilders, type ColumnBuilder } from "./copy-arrow.ts";
import type { ArrowFrame } from "../pulled-read.ts";

export interface DecodedBatch {
  /** One array of values per row, in the select list's order (null for NULL); empty when `arrow` holds the rows. */
  rows: unknown[][];
  /** Rows in the batch. */
  length: number;
  /** The rows as an Arrow record-batch message (copy-arrow.ts), when the decoder was given `arrow` columns it can take directly. */
  arrow?: Uint8Array;
  /** The row index (0-based, in the whole result) of the first row. */
  firstRowIndex: number;
  /**
   * `arrow` is the whole Arrow stream (the decoder's `frame` around the batch): the result's only
   * batch, from a decoder given a frame.
   */
  whole?: boolean;
  /** Wire bytes of the batch's text, blob and list values (what ended it, when it reached the cap). */
  wideBytes: number;
}

export interface CopyDecoderOptions {
  /** Rows per batch (default: db/protocol.ts batchRowsFor(columns)). */
  batchRows?: number;
  /** A batch also ends once its text, blob and list values hold this many bytes (default BATCH_MAX_BYTES). */
  batchMaxBytes?: number;
  /**
   * Told of each value its column cannot hold, which then reads as null and the stream goes on
   * (`arrow402 validate` lists every one). Without it, the first such value stops the stream with
   * PgValueRefused, as every query's read does: a value is never changed in a result.
   */
  onRefused?: (refused: PgValueRefused) => void;
  /**
   * The Arrow encoder's columns of the result: when every column can be taken straight into Arrow
   * buffers (copy-arrow.ts arrowDirect) and nothing asks for refused values (`onRefused`), batches
   * come as record-batch messages in `arrow`, with no values in `rows`.
   */
  arrow?: readonly EncoderColumn[];
  /**
   * With `arrow`: the Arrow stream's schema message and end marker (pulled-read.ts arrowFrame). When
   * the stream's rows are one batch, its message is written between them, in one buffer: a small
   * answer whole (`whole`), with no copy to join its pieces.
   */
  frame?: ArrowFrame;
}

const SIGNATURE = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00]; // "PGCOPY\n\377\r\n\0"
/** Flags bit 16: each tuple carries an OID (never asked for); bits 17–31 are reserved critical bits. */
const CRITICAL_FLAGS = 0xffff_0000;

const enum State {
  Header, // signature, flags, extension length: 19 bytes
  Extension, // header extension bytes (skipped)
  FieldCount, // int16
  FieldLength, // int32
  Value, // the field's bytes
  Done, // after the trailer
}

export class BinaryCopyDecoder {
  private readonly decoders: ValueDecoder[];
  private readonly wide: boolean[];
  private readonly batchRows: number;
  private readonly batchMaxBytes: number;
  private readonly onRefused: ((refused: PgValueRefused) => void) | undefined;
  /** Arrow columns the values go into (null: rows of values). */
  private readonly builders: ColumnBuilder[] | null;
  private readonly arrowColumns: readonly EncoderColumn[];
  private readonly frame: ArrowFrame | undefined;

  private state = State.Header;
  /** Bytes the current state needs. */
  private need = 19;
  /** The current item's bytes when they span chunks: exactly `need` long, `filled` of them read. */
  private gather: Uint8Array | null = null;
  private filled = 0;

  private row: unknown[] = [];
  private column = 0;
  private rows: unknown[][] = [];
  private batchLength = 0;
  private batchBytes = 0;
  private batchFirst = 0;
  private decoded = 0;
  private failure: unknown = null;

  constructor(
    readonly columns: readonly DecodeColumn[],
    options: CopyDecoderOptions = {},
  ) {
    const arrow = options.arrow;
    this.builders = arrow !== undefined && options.onRefused === undefined && arrowDirect(columns, arrow) ? columnBuilders(columns, arrow) : null;
    this.arrowColumns = arrow ?? [];
    this.frame = this.builders === null ? undefined : options.frame;
    // With builders, a decoder appends the value to its column (its result, undefined, is not kept).
    this.decoders = this.builders === null ? columns.map((c) => valueDecoder(c.wire, c.type)) : this.builders.map((b) => (buf, dv, pos, len) => b.value(buf, dv, pos, len));
    this.wide = columns.map((c) => c.type.kind === "utf8" || c.type.kind === "binary" || c.type.kind === "list");
    this.batchRows = Math.max(1, options.batchRows ?? batchRowsFor(columns.length));
    this.batchMaxBytes = Math.max(1, options.batchMaxBytes ?? BATCH_MAX_BYTES);
    this.onRefused = options.onRefused;
  }

  /** Rows decoded so far (in batches returned or still pending). */
  get rowCount(): number {
    return this.decoded;
  }

  /** True once the trailer was read. */
  get finished(): boolean {
    return this.state === State.Done;
  }

  /**
   * Makes a decoder that read its stream to the end ready for another stream of the same columns,
   * keeping its column buffers (copy-arrow.ts): a small read then allocates nothing for them. False
   * (and nothing changes) when it did not end well, or when its column buffers together grew past `maxBytes`.
   */
  reset(maxBytes: number): boolean {
    if (this.state !== State.Done || this.failure !== null || this.batchLength !== 0) return false;
    if (this.builders !== null && this.builders.reduce((sum, builder) => sum + builder.retainedBytes, 0) > maxBytes) return false;
    this.state = State.Header;
    this.need = 19;
    this.gather = null;
    this.filled = 0;
    this.row = [];
    this.column = 0;
    this.rows = [];
    this.batchBytes = 0;
    this.batchFirst = 0;
    this.decoded = 0;
    return true;
  }

  /** Decodes `chunk`; returns the batches it completed (often none). Throws PgValueRefused or ServerError. */
  push(chunk: Uint8Array): DecodedBatch[] {
    if (this.failure !== null) throw this.failure;
    try {
      return this.consume(chunk);
    } catch (error) {
      this.failure = error;
      throw error;
    }
  }

  /** The last batch (null when empty), once the stream ended; throws if it ended early. */
  end(): DecodedBatch | null {
    if (this.failure !== null) throw this.failure;
    if (this.state !== State.Done) {
      this.failure = new ServerError(`the PostgreSQL COPY stream ended ${this.state === State.Header || this.state === State.Extension ? "inside its header" : `after ${this.decoded} rows without its end marker`}`);
      throw this.failure;
    }
    // The result's only batch: the whole stream, in one buffer, when a frame was given.
    return this.batchLength > 0 ? this.flush(this.batchFirst === 0 ? this.frame : undefined) : null;
  }

  private consume(chunk: Uint8Array): DecodedBatch[] {
    const out: DecodedBatch[] = [];
    // A Buffer view (no copy) for Buffer's UTF-8 decoder (values.ts).
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const end = buf.length;
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    let pos = 0;
    for (;;) {
      if (this.gather === null && this.state >= State.FieldCount && this.state <= State.Value) pos = this.rowsInPlace(buf, dv, pos, end, out);
      if (pos === end && !(this.need === 0 && this.state === State.Value)) break;
      if (this.state === State.Done) throw new ServerError(`the PostgreSQL COPY stream has ${end - pos} bytes after its end marker`);
      // The current item spans chunks (or is part of the header): gather it, then step over it.
      if (this.gather !== null) {
        const take = Math.min(end - pos, this.need - this.filled);
        this.gather.set(buf.subarray(pos, pos + take), this.filled);
        this.filled += take;
        pos += take;
        if (this.filled < this.need) break;
        const whole = Buffer.from(this.gather.buffer, this.gather.byteOffset, this.gather.byteLength);
        this.gather = null;
        if (this.step(whole, new DataView(whole.buffer, whole.byteOffset, whole.byteLength), 0, true)) out.push(this.flush());
      } else if (end - pos >= this.need) {
        const at = pos;
        pos += this.need;
        if (this.step(buf, dv, at, false)) out.push(this.flush());
      } else {
        this.gather = new Uint8Array(this.need);
        this.gather.set(buf.subarray(pos), 0);
        this.filled = end - pos;
        break;
      }
    }
    return out;
  }

  /**
   * The fast path: every row, field length and value lying whole in `buf` from `pos`, decoded in
   * place without the per-item steps. Returns where it stopped (the end, or an item that spans
   * chunks), with the state and `need` set for that item.
   */
  private rowsInPlace(buf: Buffer, dv: DataView, pos: number, end: number, out: DecodedBatch[]): number {
    const decoders = this.decoders;
    const count = decoders.length;
    for (;;) {
      if (this.state === State.FieldCount) {
        if (end - pos < 2) return pos;
        const fields = dv.getInt16(pos);
        if (fields === -1) {
          this.state = State.Done;
          this.need = 0;
          return pos + 2;
        }
        if (fields !== count) throw new ServerError(`the PostgreSQL COPY stream has rows of ${fields} fields where ${count} columns were expected`);
        pos += 2;
        if (this.builders === null) this.row = new Array(count);
        this.column = 0;
        this.state = State.FieldLength;
        this.need = 4;
      }
      const row = this.row;
      while (this.column < count) {
        if (this.state === State.FieldLength) {
          if (end - pos < 4) return pos;
          const length = dv.getInt32(pos);
          pos += 4;
          if (length === -1) {
            if (this.builders === null) row[this.column] = null;
            else this.builders[this.column]!.nullValue();
            this.column++;
            continue;
          }
          if (length < 0) throw new ServerError(`the PostgreSQL COPY stream has a field of length ${length}`);
          if (this.wide[this.column]) this.batchBytes += length;
          this.state = State.Value;
          this.need = length;
        }
        if (end - pos < this.need) return pos;
        try {
          row[this.column] = decoders[this.column]!(buf, dv, pos, this.need, false);
        } catch (error) {
          row[this.column] = this.refused(error, this.column);
        }
        pos += this.need;
        this.column++;
        this.state = State.FieldLength;
        this.need = 4;
      }
      if (this.endRow()) out.push(this.flush());
    }
  }

  /** Consumes the current item's `need` bytes at `p`; true when a batch is complete. */
  private step(buf: Buffer, dv: DataView, p: number, owned: boolean): boolean {
    switch (this.state) {
      case State.Header: {
        for (let i = 0; i < SIGNATURE.length; i++) {
          if (buf[p + i] !== SIGNATURE[i]) throw new ServerError("the PostgreSQL answer is not a binary COPY stream (its signature differs)");
        }
        const flags = dv.getUint32(p + 11);
        if ((flags & CRITICAL_FLAGS) !== 0) throw new ServerError(`the PostgreSQL binary COPY stream has header flags 0x${flags.toString(16)} this decoder does not know`);
        const extension = dv.getUint32(p + 15);
        this.state = extension > 0 ? State.Extension : State.FieldCount;
        this.need = extension > 0 ? extension : 2;
        return false;
      }
      case State.Extension:
        this.state = State.FieldCount;
        this.need = 2;
        return false;
      case State.FieldCount: {
        const fields = dv.getInt16(p);
        if (fields === -1) {
          this.state = State.Done;
          this.need = 0;
          return false;
        }
        if (fields !== this.decoders.length) {
          throw new ServerError(`the PostgreSQL COPY stream has rows of ${fields} fields where ${this.decoders.length} columns were expected`);
        }
        if (this.builders === null) this.row = new Array(fields);
        this.column = 0;
        if (fields === 0) return this.endRow();
        this.state = State.FieldLength;
        this.need = 4;
        return false;
      }
      case State.FieldLength: {
        const length = dv.getInt32(p);
        if (length === -1) {
          if (this.builders === null) this.row[this.column] = null;
          else this.builders[this.column]!.nullValue();
          return this.nextField();
        }
        if (length < 0) throw new ServerError(`the PostgreSQL COPY stream has a field of length ${length}`);
        if (this.wide[this.column]) this.batchBytes += length;
        this.state = State.Value;
        this.need = length;
        return false;
      }
      case State.Value: {
        const column = this.column;
        try {
          this.row[column] = this.decoders[column]!(buf, dv, p, this.need, owned);
        } catch (error) {
          this.row[column] = this.refused(error, column);
        }
        return this.nextField();
      }
      case State.Done:
        return false;
    }
  }

  private nextField(): boolean {
    if (++this.column === this.decoders.length) return this.endRow();
    this.state = State.FieldLength;
    this.need = 4;
    return false;
  }

  private endRow(): boolean {
    if (this.builders === null) this.rows.push(this.row);
    this.batchLength++;
    this.decoded++;
    this.state = State.FieldCount;
    this.need = 2;
    return this.batchLength >= this.batchRows || this.batchBytes >= this.batchMaxBytes;
  }

  private flush(frame?: ArrowFrame): DecodedBatch {
    const length = this.batchLength;
    const batch: DecodedBatch =
      this.builders === null
        ? { rows: this.rows, length, firstRowIndex: this.batchFirst, wideBytes: this.batchBytes }
        : {
            rows: [],
            length,
            arrow: arrowBatch(this.builders, this.arrowColumns, length, this.batchFirst, frame),
            firstRowIndex: this.batchFirst,
            wideBytes: this.batchBytes,
            ...(frame === undefined ? {} : { whole: true }),
          };
    this.rows = [];
    this.batchLength = 0;
    this.batchBytes = 0;
    this.batchFirst = this.decoded;
    return batch;
  }

  /** Null for a refused value when `onRefused` hears of it; otherwise throws the failure, named. */
  private refused(error: unknown, column: number): null {
    const named = this.named(error, column);
    if (!(named instanceof PgValueRefused) || this.onRefused === undefined) throw named;
    this.onRefused(named);
    return null;
  }

  /** A value decoder's failure, with the column and the row it is at. */
  private named(error: unknown, column: number): unknown {
    const name = this.columns[column]!.name;
    if (error instanceof Refusal) return new PgValueRefused(column, this.decoded, name, error.detail);
    if (error instanceof WireMismatch) {
      return new ServerError(
        `column '${name}' of the PostgreSQL COPY holds ${error.detail} at row ${this.decoded}: its type is no longer the one read from the catalog; ` +
          "run 'arrow402 validate' and restart the server after a change of the table",
      );
    }
    return error;
  }
}
