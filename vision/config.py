"""Every tuning value of the reader, one frozen dataclass per stage (`ReaderConfig`).

The reader reads `config.<stage>.<field>` and nothing else tunes it. Each optional pass has a
boolean switch, so that a benchmark can run the reader with that pass alone off
(`ReaderConfig.without("toned.enabled")`). Each comment says why a value is what it is."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class SameDieConfig:
    """When two boxes are one die seen twice: dice do not overlap seen from above."""

    # Boxes overlapping this much cannot hold two dice lying side by side.
    iou: float = 0.3
    # A box this much inside another is a pip, a face or a half of that die: IoU misses it,
    # the small box being a sliver of the union.
    inside: float = 0.6


@dataclass(frozen=True)
class ProposeConfig:
    """The detector's usual look and which of its boxes go on to the nets."""

    # Heatmap peaks from here on are looked at by the value nets at all.
    detect_min: float = 0.2
    # Peak x the nets' die probability for a box to be a die: both must be fairly sure.
    keep_min: float = 0.25
    # From this peak on the detector is sure: such boxes size the extra looks, and weaker
    # peaks lower a read's confidence (a die the detector barely sees is asked about).
    sure_peak: float = 0.5
    # Weaker peaks of the usual look are kept for the faint dice and the re-toned look: a
    # pale die on pale paper or a dark one in shadow gets a peak this weak.
    faint_peak: float = 0.15
    # A whole die's predicted box ends past the frame edge by up to this share of its side;
    # half the dice the frame cuts overshoot by more.
    cut_tolerance: float = 0.05
    whole_after_all: bool = True  # ask the box refiner about such boxes before skipping them
    # ...and read them where it puts the die within this share of its side of the frame:
    # the refiner puts whole dice well inside it, most cut ones far outside.
    refined_cut: float = 0.02


@dataclass(frozen=True)
class LargeLookConfig:
    """The looks at half and a quarter of the input, for a camera close to the dice, whose
    dice the usual look boxes as pips and halves."""

    half: bool = True  # sees whole the dice of a close camera (a small lid, a phone held low)
    quarter: bool = True  # dice of a fifth of the frame and more are seen whole only there
    # Dice over this side (px at the detector's input) are larger than it was trained on
    # (10-50 px), and the frame is looked at again...
    die_input: float = 52.0
    # ...at the input that brings them to this side, the middle of what it knows...
    die_goal: float = 32.0
    dice_min: int = 64  # ...but at least this long: below it nothing is left to see
    # A large look's box is a die where the nets read a face on it this surely: a tray seen
    # whole is one large die with pips to the detector, but no face to the nets.
    face_sure: float = 0.8
    # The usual look keeps the frame when it reads this many faces surely and over twice the
    # large look's: a far camera's whole tray is no large die. math.inf: never kept.
    outread_least: float = 3


@dataclass(frozen=True)
class SmallLookConfig:
    """The second look at a larger input, for a distant camera's small dice."""

    enabled: bool = True  # off: the usual input only, where far dice are a few pixels
    # Dice under this side (px at the detector's input) shrink to a few pixels, where the
    # detector misses some and boxes the rest loosely...
    die_input: float = 16.0
    # ...so the frame is looked at again scaled to bring them to this side...
    die_goal: float = 24.0
    dice_max: int = 1280  # ...at most this long (the cost grows with the input's area)...
    # ...and at most this many times the frame's side: a small frame's tiny dice are seen
    # only enlarged.
    enlarge: float = 2.0


@dataclass(frozen=True)
class FaintConfig:
    """Dice found by a weak peak alone (under keep_min), which the peak-times-die-probability
    rule can never report: kept only where the nets are sure of a die and its face."""

    enabled: bool = True  # off: a weak peak is never a die, however sure the nets are
    # The nets must be this sure of a die, since the detector barely is...
    die: float = 0.95
    # ...and read its face this surely (such a read is never certain: see sure_peak).
    face: float = 0.8


@dataclass(frozen=True)
class ToneConfig:
    """The look at a dark or overexposed frame re-toned, where a die differs from the floor
    by a few grey levels until they are spread apart."""

    enabled: bool = True  # off: a dark or bright frame is looked at as taken only
    # Long side of the thumbnail whose median level says a frame is dark or bright: the
    # floor's level, not a die's.
    thumb: int = 160
    # A frame whose median grey level is above this is overexposed (pale dice on pale paper
    # fade into it)...
    bright: float = 150.0
    # ...one below this is dark (a dark die in shadow fades into it)...
    dark: float = 70.0
    # ...and its levels are raised to this power (bright) or its inverse (dark).
    gamma: float = 2.0
    # Judge what it finds on the re-toned frame too, as the detector saw it: a pale die's
    # pips, faint in the frame, stand out there.
    judged: bool = True
    # A die found only re-toned must show a face this surely: a wide lens's tall side faces,
    # brightened, are boxed apart from their dice and read less surely.
    face: float = 0.5


@dataclass(frozen=True)
class SpeckConfig:
    """Boxes far smaller than the frame's dice: specks, pips or glints. One camera sees all
    dice of a game at much the same size (perspective and Biggies: 0.7-1.4x the typical)."""

    enabled: bool = True  # drop the detector's specks before the nets read them
    # Drop them again once the boxes are refined: a distant camera's pips and smears, brought
    # to what they are, shrink to a third of a die.
    refined: bool = True
    # A box under this share of the typical die's side is no die (from 0.7 real dice at the
    # far side of a slanted photo would go too).
    share: float = 0.5
    # ...judged only when at least this many dice give the typical side.
    sure: int = 3


@dataclass(frozen=True)
class RefineConfig:
    """The box refiner, which brings a detector box to its die's edges, wherever a step asks
    it: the rejudged, hidden and parted boxes, the refined look and the reported boxes."""

    enabled: bool = True  # off: no step asks the refiner (the detector's boxes alone)
    # Report each die's refined box, and check it there (last, so that the checks before see
    # the boxes they were tuned on).
    final: bool = True
    # Once refined, two boxes may meet on one die (a flat die's tall side face off a wide
    # lens's axis, boxed apart from its top face): one is dropped.
    one_per_die: bool = True
    rescue_sure: float = 0.75  # a refined box is a die where the nets are this sure of one
    # A box still no die once refined is moved once more: the refiner moves a box only part
    # of the way, so a box straddling two dice may end still half on the neighbour.
    again: bool = True
    # Moved twice, a box has travelled far from the detector's guess: the nets must be as
    # sure of a die there as of a faint one (a printed dot so moved was half a die to them).
    again_die: float = 0.95


@dataclass(frozen=True)
class RejudgeConfig:
    """A box the nets call no die, judged again on its refined box: in a cluster the
    detector's box may straddle two dice, a crop of halves that is no die to the nets."""

    enabled: bool = True  # off: a box the nets call no die stays no die
    peak: float = 0.5  # a peak this sure is judged on its refined box's die belief alone...
    # ...a weaker one only where that box shows a face this surely: refined onto a speck, a
    # side face or a printed letter, a box is often a die to the nets but shows no face.
    face: float = 0.8


@dataclass(frozen=True)
class MergeConfig:
    """One box per die, and the boxes that one box hides."""

    # A dropped box grown over by a surer neighbour's box (a shadow, a cluster's shared edge)
    # is judged again with both boxes refined to their dice.
    hidden: bool = True
    # A dropped box round two touching dice of one colour holds the die the kept box misses:
    # its part past the kept box is refined alone and judged.
    parted: bool = True
    # ...where that part reaches past the kept box by this share of its side (a die's worth)...
    part_least: float = 0.5
    # ...and the nets read a face on it this surely: a cocked die's own side face, past its
    # box, reads as a face less surely.
    part_face: float = 0.8


@dataclass(frozen=True)
class NadirConfig:
    """Where the point below the camera is, when a frame's dice say it is not the middle: the
    nets take a side face at the top of a crop turned to the nadir for perspective, and one
    anywhere else for a lean, so a tilted camera's flat dice look cocked to them."""

    enabled: bool = True  # off: every crop is turned to the frame's middle
    # Other nadirs are tried only where the typical die is this unreadable to the nets...
    doubt_from: float = 0.15
    # ...and one is taken where it makes the typical die at most this unreadable...
    flat: float = 0.05
    # ...and at least halves the belief of this share of the dice doubted...
    most: float = 0.6
    # ...at this belief, turned to the middle: an oblique camera's flat dice all lean one way
    # to the nets, cocked dice every which way, so a nadir suiting a few leaves the frame.
    doubted: float = 0.2
    dice: int = 4  # judged on at least this many dice: fewer cannot tell a tilt from a lean
    sample: int = 16  # ...and at most this many, the likeliest (each nadir asks the nets)
    # The typical belief: the mean over this share of the dice, least doubted first, so a
    # few cocked dice do not make a frame look oblique.
    typical: float = 0.75
    # The nadirs tried, 8 ways, this many half-diagonals off the centre: a camera tilted
    # somewhat, and one so far off that every crop turns the same way.
    reach: tuple[float, ...] = (1.2, 1e6)


@dataclass(frozen=True)
class FacesConfig:
    """The further looks at a die's face the nets read unsurely; which boxes are dice stays
    the first look's call, only the face read moves."""

    unsure_below: float = 0.9  # a box whose likeliest class they give less is looked at again
    # The crop in other paints too (channels reordered): dice in paints the nets never saw,
    # blue pips on a green die, which grey loses too.
    paint: bool = True
    # The crop mirrored: a die reads the same in a mirror, and the mirror's errors are
    # partly its own.
    mirror: bool = True
    # The die's refined box: the detector's box takes in a shadow or a leaning side face...
    refined_look: bool = True
    # ...as one voice of three, never alone: on the refined box alone, faces the detector's
    # box reads right are lost.
    refined_weight: float = 0.5


@dataclass(frozen=True)
class CertaintyConfig:
    """What keeps a read from being certain (`vision.certainty`): a confident wrong value
    would silently corrupt a game, so anything doubtful is asked about."""

    # The nets' probability that becomes CERTAIN: the top of their scale is too bold (reads
    # at 0.90-0.94 go wrong far more often than 1 in 1,000)...
    sure_from: float = 0.94
    # ...leaving probabilities up to this one as they are (linear in between).
    calibrated_below: float = 0.8
    # Even this much belief in "cocked or smeared" keeps a face from being certain: a leaning
    # die shows a clean face that is not the one it will count as.
    lean_doubt: float = 0.03
    # Dice smaller than this (px in the frame) have their pips in a few pixels each:
    # readable, often right, but not to one error in a thousand.
    sure_side: float = 24.0
    # A box this much longer than wide is a die leaning on a wall or a neighbour: seen from
    # above a die lying flat has a near-square box.
    long_box: float = 1.3
    # Dice this close to the frame edge (share of its long side) may be cut and still be
    # predicted inside it.
    edge_doubt: float = 0.01
    # A second box on the same die that the nets hold surely unreadable doubts the read: two
    # views of one die that disagree this much are no ground for certainty.
    rivals: bool = True
    rival_unreadable: float = 0.8  # ...held unreadable this surely


@dataclass(frozen=True)
class ContextConfig:
    """The context nets, which see what a die rests on: a die leaning on a neighbour or a
    wall shows a clean face the value nets read straight through."""

    enabled: bool = True  # off: the context nets are never asked (nor on the refined boxes)
    doubt: float = 0.3  # a certain read they give this belief in a lean is left uncertain
    # A read the value nets give this much "cocked or smeared" is asked of them too...
    lean_share: float = 0.25
    # ...and is no read at all where they are this sure of the lean: both kinds of net see
    # it, so the face read is not the one the die will count as.
    sure: float = 0.9
    # Ask them again, of reads still certain, on the refined box: the detector's box may hold
    # a leaning die's clean top face alone, the refined one more of the die.
    refined: bool = True
    # ...and leave uncertain the reads they think more likely than not lean there.
    refined_doubt: float = 0.5


@dataclass(frozen=True)
class WiderConfig:
    """The value nets shown a wider view of a die: the detector often boxes a leaning die's
    clean top face alone, leaving out the side face it shows."""

    enabled: bool = True  # off: a certain read is never shown more than its box
    # The box grown this much about its centre takes in a side face; a flat die's wider view
    # is mostly floor.
    grow: float = 1.4
    doubt: float = 0.4  # a certain read they hold this unreadable there is asked about
    # A read the value nets give this much "cocked" is shown the wider view too...
    ask: float = 0.1
    # ...and is no read at all where they hold that view this unreadable.
    sure: float = 0.7


@dataclass(frozen=True)
class PipsConfig:
    """The pips counted by rule (`vision.pips`): a second opinion that fails in other ways
    than the nets, and the face size the Biggy check trusts."""

    # A certain read stays certain only where the pips, counted by rule, agree: a value both
    # see is far less likely to be wrong than either alone.
    second_opinion: bool = True
    crop: int = 64  # side of the face patch the pips are looked for in: one scale for all
    inset: float = 0.08  # share of the die's side left out round its box: edge and floor
    # The middle of a 2 or a 4 this much lighter than its face (Lab L) is glare, which may
    # hide the middle pip of a 3 or a 5: right reads stay well under it.
    bright_middle: float = 30.0


@dataclass(frozen=True)
class ColourConfig:
    """Naming a die's colour (`vision.colour`)."""

    # The colour net, which sees the whole die: a glossy top mirroring the lamp hides the
    # paint its bevels and sides still show. Off: the pip-relative rule alone.
    net: bool = True
    l_weight: float = 1.0  # lightness weighs as much as each colour axis against the palette
    # Share of the box left out round a die when looking for its most colourful pixels: the
    # floor and the neighbours.
    chroma_margin: float = 0.12
    # Lab chroma from which those pixels name a coloured die (a white die's bevels stay below).
    vivid_chroma: float = 30.0
    # A die's box is sampled at this side: medians over a few hundred pixels say as much as
    # over thousands, and pips stay several pixels wide.
    sample_px: int = 24
    # Light pips whose hue strays this far from the frame's typical pips are coloured
    # (log-BGR chromaticity distance): white pips stay well under it, gold and red far over.
    pip_tint: float = 0.5
    blank_pips: int = 2  # a die in which the pip rule finds this many pips is no blank one...
    pip_insets: tuple[float, ...] = (0.05, 0.12)  # ...looked for in its box inset so much
    # Royale's gray dice are blank, and the value nets, which never saw one, guess a face on
    # them (a 5 at 0.3-0.6). A die the nets are unsure of, with nothing pip-like in the
    # middle of its face (`pips.face_contrast` under `blank_contrast`), that the pip-relative
    # rule calls gray, is blank: gray, without a value. Rendered blank dice stand out by 0-2
    # (easy scenes) and 5-33 (hard: noise, glare), faces with pips by 30 and more (the photo
    # sets' least 31); the faces of real dice under 25 are glare-washed coloured ones, which
    # the gray test leaves alone.
    blank_face: bool = True
    blank_contrast: float = 25.0
    # Under a warm lamp or glare a gray die comes out as light as white. Where the game has
    # gray dice (the session says so), a flat face called white is blank too; elsewhere it
    # is a white or pale die whose pips glare or blur hides, an unsure read best kept.
    blank_pale: bool = False
    # Lab distance within which a pixel of a die with coloured pips is taken for a pip.
    pip_like: float = 20.0


@dataclass(frozen=True)
class SizeConfig:
    """The Biggy test (`vision.size`): a Biggy is about 1.4x the side of the ordinary dice."""

    turn_px: int = 48  # a die's box is looked at this size for its turn...
    # ...and its side divided by the box's growth at that turn to this power: the detector's
    # boxes follow a turn only part of the way.
    turn_follow: float = 0.5
    # A box grows by this share per frame width off the centre with the side faces a camera
    # sees there (a wide lens's corners more, a narrow lens's less).
    perspective_growth: float = 0.5
    typical_within: float = 1.15  # dice within this of the median give the typical side...
    big: float = 1.2  # ...and a die this much larger is big: halfway to a Biggy's 1.4
    # Clear a Biggy flag the die's pips deny: their spread grows neither with a turn nor with
    # side faces. Only ever clears a flag: dice of other makers space their pips otherwise.
    pip_check: bool = True
    pip_big: float = 1.2  # ...where the pips spread under this x the ordinary dice's...
    pip_check_max: float = 1.5  # ...for boxes up to this x the typical die (beyond: big)...
    pip_references: int = 4  # ...against this many ordinary dice nearest the typical size


@dataclass(frozen=True)
class ReaderConfig:
    """The whole reader's tuning, one part per stage, in pipeline order."""

    same_die: SameDieConfig = SameDieConfig()
    propose: ProposeConfig = ProposeConfig()
    large: LargeLookConfig = LargeLookConfig()
    small: SmallLookConfig = SmallLookConfig()
    specks: SpeckConfig = SpeckConfig()
    refine: RefineConfig = RefineConfig()
    rejudge: RejudgeConfig = RejudgeConfig()
    faint: FaintConfig = FaintConfig()
    toned: ToneConfig = ToneConfig()
    merge: MergeConfig = MergeConfig()
    nadir: NadirConfig = NadirConfig()
    faces: FacesConfig = FacesConfig()
    certainty: CertaintyConfig = CertaintyConfig()
    context: ContextConfig = ContextConfig()
    wider: WiderConfig = WiderConfig()
    pips: PipsConfig = PipsConfig()
    colour: ColourConfig = ColourConfig()
    size: SizeConfig = SizeConfig()

    def with_values(self, **changes: object) -> ReaderConfig:
        """This config with fields changed, named "stage.field" written stage__field:
        `config.with_values(rejudge__face=1.01, context__enabled=False)`."""
        parts: dict[str, dict[str, object]] = {}
        for key, value in changes.items():
            stage, sep, name = key.partition("__")
            if not sep or stage not in {f.name for f in dataclasses.fields(self)}:
                raise ValueError(f"{key!r}: not stage__field")
            parts.setdefault(stage, {})[name] = value
        return dataclasses.replace(self, **{
            stage: dataclasses.replace(getattr(self, stage), **fields)
            for stage, fields in parts.items()})

    def without(self, *switches: str) -> ReaderConfig:
        """This config with the named switches ("stage.field", e.g. "toned.enabled") off."""
        return self.with_values(**{s.replace(".", "__"): False for s in switches})


# The defaults, for functions that take one stage's config and default to it.
DEFAULT = ReaderConfig()
