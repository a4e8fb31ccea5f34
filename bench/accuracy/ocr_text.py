"""Reading the PaddleOCR recognizer's output: CTC greedy decoding and character accuracy, one
copy for every OCR benchmark and script."""

REC_OUTPUT = "softmax_11.tmp_0"


def ctc_decode(probs, chars):
    """Greedy CTC per row of [N, T, classes]: argmax, merge repeats, drop blanks (class 0)."""
    out = []
    for row in probs:
        s, prev = [], -1
        for k in row.argmax(axis=-1):
            if k != prev and k != 0:
                s.append(chars[k] if k < len(chars) else "")
            prev = k
        out.append("".join(s))
    return out


def edit_distance(a, b):
    """Levenshtein distance (insertions, deletions, substitutions, each 1)."""
    d = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, cb in enumerate(b, 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (ca != cb))
            prev, d[j] = d[j], cur
    return d[len(b)]


def scored_text(text, spaces=False):
    """The text a reading is scored on. PaddleOCR's own recognition metric (ppocr RecMetric,
    ignore_space=True by default) removes spaces from prediction and label: the v4 recognizer
    places them where blank and space nearly tie (it reads 'soppier PASTERNS Total' as
    'soppierPASTERNSTotal' in float, and adds leading ones), so counted spaces are most of the
    differences between two programs (docs/accuracy.md). spaces=True keeps them."""
    return text if spaces else text.replace(" ", "")


def accuracy_unit(spaces=False, against_float=False):
    """How a benchmark table names the metric (against_float: scored against float's reading)."""
    return ("character agreement with float" if against_float else "character accuracy") + " (%, " + (
        "spaces counted)" if spaces else "spaces removed as PaddleOCR's RecMetric does)")


def char_accuracy(preds, truth, spaces=False):
    """100 (1 - sum of edit distances / sum of truth lengths), on scored_text."""
    preds, truth = [scored_text(p, spaces) for p in preds], [scored_text(t, spaces) for t in truth]
    errs = sum(edit_distance(p, t) for p, t in zip(preds, truth))
    return 100.0 * (1 - errs / sum(len(t) for t in truth))


class CharAccuracy:
    """A fixpoint.evaluate ratio metric: line i gives (100 (len_i - errors_i), len_i), so the
    session's value is the dataset's character accuracy 100 (1 - sum errors / sum lengths) and its
    bootstrap interval resamples whole lines (the errors within a line are not independent).
    Texts are compared as scored_text gives them. Picklable (Dask ships it)."""

    def __init__(self, chars, output=REC_OUTPUT, spaces=False):
        self.chars = chars
        self.output = output
        self.spaces = spaces

    def __call__(self, outputs, target):
        (pred,) = ctc_decode(outputs[self.output], self.chars)
        pred, target = scored_text(pred, self.spaces), scored_text(target, self.spaces)
        return (100.0 * (len(target) - edit_distance(pred, target)), float(len(target)))
