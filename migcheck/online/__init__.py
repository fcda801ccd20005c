"""``migcheck migrate``: a topic widened online, the way gh-ost and Vitess Reshard do it.

The phases (gh-ost's and Vitess's terms): **copy** the history into the new topic and
keep tailing it (``copy --follow``, in the same process) while the old readers go on;
**wait** until the copy's lag is low and every copied range has been checked; **cut
over** at a barrier: the producers paused, the source's ends quiet, the copy drained to
them and its tail checked, then the producers switched; an offset translates exactly
only there.  A cut-over that cannot finish within ``--cutover-timeout`` **reverts**: the
producers resume on the old topic and the copy goes on.  Then each plain group moves
to the new topic at the barrier's ends, in its own time: that adds nothing to the pause.
"""
