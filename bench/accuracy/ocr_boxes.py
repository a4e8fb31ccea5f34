"""Reading the PaddleOCR detector's probability map: DB post-processing (binarize, connected
regions, box score, unclip) and ICDAR-style matching (IoU >= 0.5, one to one) for Hmean.

The rendered pages have horizontal lines, so a region's minimum-area rectangle is its bounding
box and PaddleOCR's polygon unclip (offset by area * ratio / perimeter) is that box grown by the
same distance on every side; thresholds are PaddleOCR's defaults (thresh 0.3, box_thresh 0.6,
unclip_ratio 1.5, min_size 3)."""
import numpy as np
from scipy import ndimage

DET_OUTPUT = "sigmoid_0.tmp_0"


def db_boxes(prob, thresh=0.3, box_thresh=0.6, unclip_ratio=1.5, min_size=3):
    """Boxes (left, top, right, bottom) in pixels from one [H, W] probability map."""
    H, W = prob.shape
    labels, _ = ndimage.label(prob > thresh, structure=np.ones((3, 3), bool))
    boxes = []
    for sl in ndimage.find_objects(labels):
        y0, y1, x0, x1 = sl[0].start, sl[0].stop, sl[1].start, sl[1].stop
        h, w = y1 - y0, x1 - x0
        if min(h, w) < min_size:
            continue
        if prob[y0:y1, x0:x1].mean() < box_thresh:  # PaddleOCR's "fast" score: mean inside the box
            continue
        d = w * h * unclip_ratio / (2 * (w + h))
        if min(h, w) + 2 * d < min_size + 2:
            continue
        boxes.append((max(0.0, x0 - d), max(0.0, y0 - d), min(float(W), x1 + d), min(float(H), y1 + d)))
    return boxes


def iou(a, b):
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def match(detected, truth, threshold=0.5):
    """Number of one-to-one pairs with IoU >= threshold, best pairs first."""
    pairs = sorted(((iou(d, t), i, j) for i, d in enumerate(detected) for j, t in enumerate(truth)), reverse=True)
    used_d, used_t, n = set(), set(), 0
    for v, i, j in pairs:
        if v < threshold:
            break
        if i not in used_d and j not in used_t:
            used_d.add(i)
            used_t.add(j)
            n += 1
    return n


class DetHmean:
    """A fixpoint.evaluate ratio metric: a page gives (100 * 2 matched, detected + true boxes), so
    the pooled value is the dataset's Hmean 2PR/(P+R) = 2M/(D+T) in percent, and the bootstrap
    resamples whole pages. Picklable."""

    def __init__(self, output=DET_OUTPUT):
        self.output = output

    def __call__(self, outputs, target):
        detected = db_boxes(outputs[self.output][0, 0])
        truth = [box for _, box in target]
        return (100.0 * 2 * match(detected, truth), float(len(detected) + len(truth)))
