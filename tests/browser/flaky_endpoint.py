"""An endpoint whose tasks die fast while it stays enabled, for test_recover and test_replay: a
short retry schedule (3 attempts, 100 ms apart) long before --disable-after (10 min)."""

from stacks import Publisher, ScriptedReceiver, new_secret

SCHEDULE = "100ms,100ms"  # 3 attempts
# (number, trigger, status, response) of the attempts of a dead task, as its event page lists them
FAILED = [(str(n), "scheduled", "500", "receiver down") for n in [1, 2, 3]]


def start_flaky_endpoint(cls, work, merchant, status):
    """Sets cls.publisher (retrying on SCHEDULE), cls.receiver (a ScriptedReceiver answering
    `status`) and cls.endpoint (`merchant`'s, to that receiver), closed at class cleanup; returns
    the publisher."""
    cls.publisher = p = Publisher(work, retry_schedule=SCHEDULE, disable_after="10m")
    cls.addClassCleanup(p.close)
    cls.receiver = ScriptedReceiver(status=status)
    cls.addClassCleanup(cls.receiver.close)
    cls.endpoint = p.add_endpoint(merchant, cls.receiver.port, new_secret())
    return p
