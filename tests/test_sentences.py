"""Sentence splitting is shared by every task, and cases run on several threads at once."""

from concurrent.futures import ThreadPoolExecutor

from programs.sentences import split_sentences


def test_sentences_split_on_several_threads_at_once_are_those_split_alone():
    """pysbd keeps the text being split on its segmenter: shared by two threads, it found each
    sentence's offsets in the other thread's text and dropped sentences (99 of 120 splits wrong)."""
    texts = [" ".join(f"Passage {i} says fact {j} here ." for j in range(30)) for i in range(40)]
    alone = [[(s.start, s.text) for s in split_sentences(t)] for t in texts]
    assert all(len(sentences) == 30 for sentences in alone)
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda t: [(s.start, s.text) for s in split_sentences(t)], texts * 3))
    assert together == alone * 3


def test_no_boundary_inside_an_open_quotation():
    from programs.sentences import split_sentences

    text = "`` Where Have All the Flowers Gone ? '' is a folk song . Pete Seeger wrote it ."
    assert [s.text for s in split_sentences(text)] == [
        "`` Where Have All the Flowers Gone ? '' is a folk song .",
        "Pete Seeger wrote it .",
    ]
    # a quotation never closed leaves the boundaries as they were
    assert len(split_sentences("`` He left . She stayed . They met .")) == 3
