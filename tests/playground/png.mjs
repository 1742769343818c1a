// A tiny PNG decoder (node:zlib only) for checking screenshots: 8-bit
// greyscale / RGB / RGBA / grey+alpha, non-interlaced — what Chromium writes.
import { inflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHANNELS = { 0: 1, 2: 3, 4: 2, 6: 4 };

/** Decodes a PNG into {width, height, data: RGBA Uint8Array}. */
export function decodePng(buffer) {
  if (!buffer.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  let offset = 8;
  let header;
  const idat = [];
  while (offset < buffer.length) {
    const length = buffer.readUInt32BE(offset);
    const type = buffer.toString('latin1', offset + 4, offset + 8);
    const body = buffer.subarray(offset + 8, offset + 8 + length);
    offset += 12 + length;
    if (type === 'IHDR') {
      header = {
        width: body.readUInt32BE(0),
        height: body.readUInt32BE(4),
        bitDepth: body[8],
        colorType: body[9],
        interlace: body[12],
      };
    } else if (type === 'IDAT') {
      idat.push(body);
    } else if (type === 'IEND') {
      break;
    }
  }
  if (!header) throw new Error('PNG without IHDR');
  const { width, height, bitDepth, colorType, interlace } = header;
  const channels = CHANNELS[colorType];
  if (bitDepth !== 8 || channels === undefined || interlace !== 0) {
    throw new Error(`unsupported PNG: bit depth ${bitDepth}, colour type ${colorType}, interlace ${interlace}`);
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  if (raw.length < height * (stride + 1)) throw new Error('truncated PNG data');
  const pixels = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = y * stride;
    const prev = out - stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? pixels[out + x - channels] : 0;
      const b = y > 0 ? pixels[prev + x] : 0;
      const c = y > 0 && x >= channels ? pixels[prev + x - channels] : 0;
      let value;
      switch (filter) {
        case 0: value = line[x]; break;
        case 1: value = line[x] + a; break;
        case 2: value = line[x] + b; break;
        case 3: value = line[x] + ((a + b) >> 1); break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          value = line[x] + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
          break;
        }
        default: throw new Error(`bad PNG filter ${filter} on row ${y}`);
      }
      pixels[out + x] = value & 0xff;
    }
  }
  const data = new Uint8Array(width * height * 4);
  for (let i = 0, j = 0; i < width * height; i++, j += channels) {
    const o = i * 4;
    if (channels >= 3) {
      data[o] = pixels[j];
      data[o + 1] = pixels[j + 1];
      data[o + 2] = pixels[j + 2];
      data[o + 3] = channels === 4 ? pixels[j + 3] : 255;
    } else {
      data[o] = data[o + 1] = data[o + 2] = pixels[j];
      data[o + 3] = channels === 2 ? pixels[j + 1] : 255;
    }
  }
  return { width, height, data };
}

/** '#c2410c' → [194, 65, 12] */
export function hexToRgb(hex) {
  const n = Number.parseInt(hex.replace('#', ''), 16);
  return [(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
}

/** Pixels within `tolerance` (per channel) of `rgb`, inside `box` ({x, y, width, height}, default all). */
export function countColour(image, rgb, { box, tolerance = 2 } = {}) {
  const x0 = Math.max(0, Math.floor(box?.x ?? 0));
  const y0 = Math.max(0, Math.floor(box?.y ?? 0));
  const x1 = Math.min(image.width, Math.ceil(box ? box.x + box.width : image.width));
  const y1 = Math.min(image.height, Math.ceil(box ? box.y + box.height : image.height));
  let count = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const o = (y * image.width + x) * 4;
      if (
        Math.abs(image.data[o] - rgb[0]) <= tolerance &&
        Math.abs(image.data[o + 1] - rgb[1]) <= tolerance &&
        Math.abs(image.data[o + 2] - rgb[2]) <= tolerance
      ) {
        count++;
      }
    }
  }
  return count;
}

/** How varied the image is: distinct colours (capped) and the share of pixels unlike the most common one. */
export function variety(image) {
  const counts = new Map();
  for (let o = 0; o < image.data.length; o += 4) {
    const key = (image.data[o] << 16) | (image.data[o + 1] << 8) | image.data[o + 2];
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  let dominant = 0;
  for (const n of counts.values()) if (n > dominant) dominant = n;
  const total = image.width * image.height;
  return { distinctColours: counts.size, nonDominantShare: (total - dominant) / total };
}
