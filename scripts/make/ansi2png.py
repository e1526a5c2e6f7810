#!/usr/bin/env python3
"""Render a terminal capture with SGR colour codes (tmux capture-pane -e) as a PNG.

Usage: make/ansi2png.py CAPTURE.txt OUT.png [--cols N]

Only what a capture of trtbuild's live view contains is understood: SGR attributes (bold,
faint, reset) and colours (16, 256 and RGB; foreground and background). Characters are
drawn on a fixed grid with DejaVu Sans Mono (DejaVu Sans for Braille, which the mono face
lacks); East Asian wide characters take two cells. Needs python3-pil and fonts-dejavu-core.
"""

import argparse
import re
import unicodedata

from PIL import Image, ImageDraw, ImageFont

FONT_DIR = "/usr/share/fonts/truetype/dejavu/"
SIZE = 15
BG = (30, 31, 40)
FG = (214, 216, 222)
PALETTE = [  # the 16 ANSI colours of a calm dark theme
    (40, 42, 54), (224, 108, 117), (152, 195, 121), (229, 192, 123),
    (97, 175, 239), (198, 120, 221), (86, 182, 194), (200, 204, 212),
    (110, 115, 135), (240, 130, 140), (170, 215, 140), (240, 210, 140),
    (120, 190, 250), (215, 140, 235), (110, 200, 210), (240, 242, 246),
]
SGR = re.compile(r"\x1b\[([0-9;:]*)m")
OTHER_ESC = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|\][^\x07\x1b]*(\x07|\x1b\\))")


def colour256(n):
    if n < 16:
        return PALETTE[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return steps[n // 36], steps[n // 6 % 6], steps[n % 6]
    v = 8 + 10 * (n - 232)
    return v, v, v


class Style:
    def __init__(self):
        self.reset()

    def reset(self):
        self.fg, self.bg, self.bold, self.faint = None, None, False, False

    def apply(self, params):
        codes = [int(p) if p else 0 for p in re.split("[;:]", params)] if params else [0]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                self.reset()
            elif c == 1:
                self.bold = True
            elif c == 2:
                self.faint = True
            elif c == 22:
                self.bold = self.faint = False
            elif 30 <= c <= 37:
                self.fg = PALETTE[c - 30]
            elif 90 <= c <= 97:
                self.fg = PALETTE[c - 90 + 8]
            elif c == 39:
                self.fg = None
            elif 40 <= c <= 47:
                self.bg = PALETTE[c - 40]
            elif 100 <= c <= 107:
                self.bg = PALETTE[c - 100 + 8]
            elif c == 49:
                self.bg = None
            elif c in (38, 48) and i + 1 < len(codes):
                if codes[i + 1] == 5 and i + 2 < len(codes):
                    col = colour256(codes[i + 2])
                    i += 2
                elif codes[i + 1] == 2 and i + 4 < len(codes):
                    col = tuple(codes[i + 2:i + 5])
                    i += 4
                else:
                    col = None
                if c == 38:
                    self.fg = col
                else:
                    self.bg = col
            i += 1

    def colours(self):
        fg = self.fg or FG
        if self.faint:
            fg = tuple((a + b) // 2 for a, b in zip(fg, BG))
        return fg, self.bg


def width(ch):
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def cells(line):
    """Yield (column, character, style colours, bold) for one captured line."""
    style, col, pos = Style(), 0, 0
    while pos < len(line):
        m = SGR.match(line, pos)
        if m:
            style.apply(m.group(1))
            pos = m.end()
            continue
        m = OTHER_ESC.match(line, pos)
        if m:
            pos = m.end()
            continue
        ch = line[pos]
        pos += 1
        w = width(ch)
        if w == 0:
            continue
        fg, bg = style.colours()
        yield col, w, ch, fg, bg, style.bold
        col += w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("out")
    ap.add_argument("--cols", type=int, default=100)
    args = ap.parse_args()

    with open(args.capture, encoding="utf-8") as f:
        lines = f.read().rstrip("\n").split("\n")
    mono = ImageFont.truetype(FONT_DIR + "DejaVuSansMono.ttf", SIZE)
    bold = ImageFont.truetype(FONT_DIR + "DejaVuSansMono-Bold.ttf", SIZE)
    sans = ImageFont.truetype(FONT_DIR + "DejaVuSans.ttf", SIZE)
    cw = round(mono.getlength("M"))
    ascent, descent = mono.getmetrics()
    ch_h = ascent + descent + 3
    pad = 18
    img = Image.new("RGB", (2 * pad + cw * args.cols, 2 * pad + ch_h * len(lines)), BG)
    draw = ImageDraw.Draw(img)
    for row, line in enumerate(lines):
        y = pad + row * ch_h
        for col, w, ch, fg, bg, is_bold in cells(line):
            if col >= args.cols:
                break
            x = pad + col * cw
            if bg:
                draw.rectangle([x, y, x + w * cw - 1, y + ch_h - 1], fill=bg)
            font = sans if 0x2800 <= ord(ch) <= 0x28FF else (bold if is_bold else mono)
            if ch in "━█░":
                # Block and line glyphs are drawn as shapes so that bars join without gaps.
                mid = y + ch_h // 2
                if ch == "━":
                    draw.rectangle([x, mid - 1, x + cw - 1, mid + 1], fill=fg)
                elif ch == "█":
                    draw.rectangle([x, y + 2, x + cw - 1, y + ch_h - 3], fill=fg)
                else:
                    for yy in range(y + 2, y + ch_h - 2, 2):
                        for xx in range(x + (yy // 2) % 2, x + cw, 2):
                            draw.point((xx, yy), fill=fg)
                continue
            draw.text((x, y + 1), ch, font=font, fill=fg)
    img.save(args.out, optimize=True)


if __name__ == "__main__":
    main()
