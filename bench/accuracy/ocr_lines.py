"""Rendered text lines with known strings for the PaddleOCR v4 recognizer: a deterministic,
seeded dataset with three disjoint splits (calibration, dev, test).

Sample i of split s depends only on (s, i): its own generator is seeded with (SPLIT_SEEDS[s], i),
so the first 16 calibration lines are the same whether 16 or 256 are asked for, and a dev choice
never sees a test line. Everything comes from Debian packages that scripts/setup.sh installs
(fonts-dejavu-*, fonts-liberation2, fonts-freefont-ttf, fonts-noto-core, fonts-noto-cjk and
wamerican's word list); a missing file is an error, never a silent substitute.

What varies per line: the text kind (words in four cases, numbers and codes, prices, dates and
times, punctuation, symbols of the dictionary beyond ASCII, Chinese), the font (48 Latin faces of
five families, regular/bold/italic/mono/condensed; Noto CJK for Chinese), size, ink and paper
colours (5% light on dark), padding, rotation (+-2.5 degrees), a slight perspective warp, blur,
Gaussian noise and JPEG compression. Then PaddleOCR's rec preprocessing (height 48, aspect kept,
right-padded to 320, (x/255 - 0.5)/0.5)."""
import io
import os
import sys

import numpy as np
from fontTools.ttLib import TTFont
from PIL import Image, ImageDraw, ImageFilter, ImageFont

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from make_ocr_inputs import rec_input  # noqa: E402  (PaddleOCR rec preprocessing, one copy)

ASSETS = os.path.join(ROOT, "scripts", "oracle", "node_modules", "@gutenye", "ocr-models", "assets")
REC_MODEL = os.path.join(ASSETS, "ch_PP-OCRv4_rec_infer.onnx")
KEYS = os.path.join(ASSETS, "ppocr_keys_v1.txt")
WORDS_FILE = "/usr/share/dict/american-english"
SPLIT_SEEDS = {"calibration": 1001, "dev": 2002, "test": 3003}

TT = "/usr/share/fonts/truetype"
LATIN_FONTS = (
    [f"{TT}/dejavu/DejaVu{f}.ttf" for f in (
        "Sans", "Sans-Bold", "Sans-Oblique", "Sans-BoldOblique", "SansCondensed", "SansCondensed-Bold",
        "SansCondensed-Oblique", "SansMono", "SansMono-Bold", "SansMono-Oblique", "Serif", "Serif-Bold",
        "Serif-Italic", "Serif-BoldItalic", "SerifCondensed", "SerifCondensed-Italic")]
    + [f"{TT}/liberation2/Liberation{f}.ttf" for f in (
        "Sans-Regular", "Sans-Bold", "Sans-Italic", "Sans-BoldItalic", "Serif-Regular", "Serif-Bold",
        "Serif-Italic", "Serif-BoldItalic", "Mono-Regular", "Mono-Bold", "Mono-Italic", "Mono-BoldItalic")]
    + [f"{TT}/freefont/Free{f}.ttf" for f in (
        "Sans", "SansBold", "SansOblique", "SansBoldOblique", "Serif", "SerifBold", "SerifItalic",
        "SerifBoldItalic", "Mono", "MonoBold", "MonoOblique", "MonoBoldOblique")]
    + [f"{TT}/noto/Noto{f}.ttf" for f in (
        "Sans-Regular", "Sans-Bold", "Sans-Italic", "Sans-BoldItalic", "Serif-Regular", "Serif-Bold",
        "Serif-Italic", "Serif-BoldItalic")])
OT = "/usr/share/fonts/opentype/noto"
CJK_FONTS = [(f"{OT}/NotoSansCJK-Regular.ttc", 2), (f"{OT}/NotoSansCJK-Bold.ttc", 2),
             (f"{OT}/NotoSerifCJK-Regular.ttc", 2), (f"{OT}/NotoSerifCJK-Bold.ttc", 2)]  # index 2: SC

CHINESE_WORDS = ("中国 北京 上海 广州 深圳 公司 有限 银行 价格 日期 电话 地址 发票 金额 合计 数量 单价 "
                 "时间 名称 编号 学校 医院 超市 商店 餐厅 饭店 酒店 机场 火车 汽车 地铁 出口 入口 欢迎 "
                 "光临 谢谢 营业 开放 关闭 停车 禁止 吸烟 注意 安全 小心 地面 会员 优惠 特价 新品 "
                 "天气 今天 明天 星期 上午 下午 人民 大学 科技 电子 服务 中心 管理 市场 工业 技术 "
                 "文化 发展 经济 社会 生活 工作 学习 东 西 南 北 路 街 号 楼 层 室 元 米 公斤").split()
SYMBOL_TOKENS = ["25℃", "37.5°C", "3×4", "10±2", "m²", "café", "Müller", "déjà", "Über", "№ 12", "Brand®",
                 "Name™", "¥128", "￥35.00", "100%", "α=0.5", "β-test", "π≈3.14", "5÷2", "→ exit", "★★★",
                 "① step", "x≤10", "y≥2", "§ 4"]
MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


class Alphabet:
    """The recognizer's classes: blank, ppocr_keys_v1.txt, space (PaddleOCR's use_space_char)."""

    def __init__(self, path=KEYS):
        with open(path, encoding="utf-8") as f:
            self.chars = ["<blank>"] + [line.rstrip("\n") for line in f] + [" "]
        self.known = set(self.chars[1:])

    def check(self, text):
        missing = sorted({c for c in text if c not in self.known})
        if missing:
            raise ValueError(f"text {text!r} has characters the recognizer cannot output: {missing}")
        return text


def load_words():
    if not os.path.exists(WORDS_FILE):
        raise SystemExit(f"ocr_lines: {WORDS_FILE} not found (install wamerican: bash scripts/setup.sh)")
    with open(WORDS_FILE, encoding="utf-8") as f:
        words = [w.strip() for w in f]
    return sorted({w for w in words if w.isascii() and w.isalpha() and 2 <= len(w) <= 11})


class TextSource:
    """Draws one line's text from its generator: (kind, text)."""

    KINDS = ["words", "words", "words", "numbers", "prices", "dates", "punctuation", "symbols", "chinese"]

    def __init__(self, alphabet):
        self.words = load_words()
        self.alphabet = alphabet
        for t in SYMBOL_TOKENS + CHINESE_WORDS + MONTHS:
            alphabet.check(t)

    def word(self, rng):
        w = self.words[int(rng.integers(len(self.words)))]
        r = rng.random()
        return w.lower() if r < 0.5 else w.capitalize() if r < 0.8 else w.upper() if r < 0.93 else w

    def words_line(self, rng, max_len):
        out = [self.word(rng)]
        while rng.random() < 0.75:
            w = self.word(rng)
            if len(" ".join(out)) + 1 + len(w) > max_len:
                break
            out.append(w)
        return " ".join(out)

    def text(self, rng):
        kind = self.KINDS[int(rng.integers(len(self.KINDS)))]
        i = lambda lo, hi: int(rng.integers(lo, hi))  # noqa: E731
        if kind == "words":
            t = self.words_line(rng, 22)
        elif kind == "numbers":
            t = [f"{i(0, 10**i(1, 7))}", f"+86 1{i(30, 99)}-{i(1000, 9999)}-{i(1000, 9999)}",
                 f"{chr(65 + i(0, 26))}{chr(65 + i(0, 26))}-{i(100, 99999)}", f"No. {i(1, 9999)}",
                 f"{i(0, 999)}.{i(0, 99):02d}", f"ID {i(10**5, 10**8)}"][i(0, 6)]
        elif kind == "prices":
            v = f"{i(0, 5000):,}.{i(0, 100):02d}"
            t = [f"${v}", f"¥{v}", f"￥{i(1, 999)}", f"{v} USD", f"Total: ${v}", f"{self.word(rng)} ${v}"][i(0, 6)]
        elif kind == "dates":
            y, m, d = i(1990, 2040), i(1, 13), i(1, 29)
            t = [f"{y}-{m:02d}-{d:02d}", f"{d:02d}/{m:02d}/{y}", f"{MONTHS[m - 1]} {d}, {y}", f"{y}年{m}月{d}日",
                 f"{i(0, 24):02d}:{i(0, 60):02d}", f"{i(0, 24):02d}:{i(0, 60):02d}:{i(0, 60):02d}"][i(0, 6)]
        elif kind == "punctuation":
            w = self.words_line(rng, 16)
            t = [f"{w}.", f"{w}, {self.word(rng)}!", f"({w})", f"\"{w}\"", f"{w}?", f"{w}: {i(0, 100)}%",
                 f"{w} & {self.word(rng)}", f"{w}/{self.word(rng)}", f"#{i(1, 100)} {w}", f"{w}@{self.word(rng)}.com",
                 f"{w}; {self.word(rng)}", f"{w} - {self.word(rng)}"][i(0, 12)]
        elif kind == "symbols":
            t = SYMBOL_TOKENS[i(0, len(SYMBOL_TOKENS))]
            if rng.random() < 0.5:
                t = f"{self.word(rng)} {t}" if rng.random() < 0.5 else f"{t} {self.word(rng)}"
        else:
            n = i(1, 4)
            t = "".join(CHINESE_WORDS[i(0, len(CHINESE_WORDS))] for _ in range(n))
            if rng.random() < 0.3:
                t += f"{i(1, 1000)}"
        return kind, self.alphabet.check(t)


def perspective_coeffs(src, dst):
    """PIL's PERSPECTIVE transform maps output pixel (x, y) to input ((a x + b y + c) / (g x + h y + 1), ...):
    the 8 coefficients that send each dst corner to its src corner."""
    rows, rhs = [], []
    for (x, y), (u, v) in zip(dst, src):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        rhs += [u, v]
    return np.linalg.solve(np.array(rows, np.float64), np.array(rhs, np.float64)).tolist()


CMAPS = {}


def covers(path, index, text):
    """Whether the face has a glyph for every character (a missing one would draw a box the label
    does not have)."""
    if (path, index) not in CMAPS:
        if not os.path.exists(path):
            raise SystemExit(f"ocr_lines: font {path} not found (bash scripts/setup.sh installs it)")
        with TTFont(path, fontNumber=index, lazy=True) as f:
            CMAPS[path, index] = set(f.getBestCmap())
    return all(ord(c) in CMAPS[path, index] for c in text if c != " ")


def render(text, kind, rng):
    """One line image (PIL RGB) with the look drawn from rng, in a face drawn among those that have
    every glyph of the text."""
    faces = CJK_FONTS if kind == "chinese" else [(p, 0) for p in LATIN_FONTS] + CJK_FONTS
    faces = [f for f in faces if covers(*f, text)]
    if not faces:
        raise ValueError(f"ocr_lines: no font draws every character of {text!r}")
    path, index = faces[int(rng.integers(len(faces)))]
    size = int(rng.integers(20, 48))
    font = ImageFont.truetype(path, size, index=index)
    paper = tuple(int(v) for v in rng.integers(190, 256, 3))
    ink = tuple(int(v) for v in rng.integers(0, 90, 3))
    if rng.random() < 0.05:
        paper, ink = tuple(255 - v for v in paper), tuple(255 - v for v in ink)
    left, top, right, bottom = font.getbbox(text)
    px, py = int(rng.integers(2, 16)), int(rng.integers(2, 12))
    img = Image.new("RGB", (right - left + 2 * px, bottom - top + 2 * py), paper)
    ImageDraw.Draw(img).text((px - left, py - top), text, font=font, fill=ink)
    angle = float(rng.uniform(-2.5, 2.5))
    img = img.rotate(angle, resample=Image.BICUBIC, expand=True, fillcolor=paper)
    if rng.random() < 0.5:
        w, h = img.size
        j = lambda s: float(rng.uniform(0, s))  # noqa: E731
        dx, dy = 0.04 * w, 0.12 * h
        dst = [(0, 0), (w, 0), (w, h), (0, h)]
        src = [(j(dx), j(dy)), (w - j(dx), j(dy)), (w - j(dx), h - j(dy)), (j(dx), h - j(dy))]
        img = img.transform((w, h), Image.PERSPECTIVE, perspective_coeffs(src, dst), Image.BICUBIC, fillcolor=paper)
    if rng.random() < 0.4:
        img = img.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.3, 1.3))))
    if rng.random() < 0.5:
        a = np.asarray(img, np.float32) + rng.normal(0, float(rng.uniform(2, 12)), (img.height, img.width, 3))
        img = Image.fromarray(np.clip(np.rint(a), 0, 255).astype(np.uint8))
    if rng.random() < 0.5:
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=int(rng.integers(25, 90)))
        img = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    return img


class OcrLines:
    """lines.sample(split, i) -> (x [1, 3, 48, 320] float32, text, kind); lines.split(split, n) the
    first n; lines.feeds(split, n, input) -> [({input: x}, text)] for fixpoint.evaluate."""

    def __init__(self):
        self.alphabet = Alphabet()
        self.source = TextSource(self.alphabet)

    def sample(self, split, i):
        if split not in SPLIT_SEEDS:
            raise ValueError(f"split must be one of {', '.join(SPLIT_SEEDS)}, got {split!r}")
        rng = np.random.default_rng([SPLIT_SEEDS[split], i])
        kind, text = self.source.text(rng)
        return rec_input(render(text, kind, rng))[0:1], text, kind

    def split(self, split, n, start=0):
        return [self.sample(split, i) for i in range(start, start + n)]

    def feeds(self, split, n, input_name="x", start=0):
        return [({input_name: x}, text) for x, text, _ in self.split(split, n, start)]
