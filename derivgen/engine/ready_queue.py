"""The order of the engine's ready heap: entries are ``(-sequence number, push number, node)``.

Nodes of equal sequence number (every leaf's AccumulateGrad has the largest one) leave the heap in the
order they became ready, which is the order of the edges that completed them: the same on every run, on
the plain loop and after a compiled tape run alike, so hooks on several leaves fire in a fixed order (an
object's address, the tie-break before, differs from run to run)."""
import itertools

push_numbers = itertools.count()
