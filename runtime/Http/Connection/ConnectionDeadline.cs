using System.Threading;

namespace Falconet.Http;

/// <summary>
/// The deadline of a connection's current phase (waiting for a request, receiving its head, lingering), kept as one
/// <c>long</c> of timestamp ticks that the connection's loop arms and the server's heartbeat expires.
/// </summary>
/// <remarks>
/// Both sides change it with a compare-and-swap, which decides the race between a deadline passing and the loop
/// moving on: whichever comes first wins, and the other sees it. Once expired it stays expired: the loop has been
/// woken (its receive stopped) and must close.
/// </remarks>
internal sealed class ConnectionDeadline
{
    /// <summary>No deadline runs (a request is being handled): neither the heartbeat nor a stopping server expires it.</summary>
    public const long None = long.MaxValue;

    /// <summary>A deadline that runs but never passes (the timeout is infinite); a stopping server can still expire it.</summary>
    public const long NeverPasses = long.MaxValue - 1;

    /// <summary>The value once the heartbeat (or a stopping server) expired it.</summary>
    private const long Expired = long.MinValue;

    private long _value = None;

    // The last deadline the loop set (its own copy: expiring it does not change this one).
    private long _armed = None;

    /// <summary>True once the deadline was expired; the loop's receive has been stopped.</summary>
    public bool IsExpired => Volatile.Read(ref _value) == Expired;

    /// <summary>The deadline in timestamp ticks, <see cref="None"/>, or <see cref="long.MinValue"/> once expired.</summary>
    public long Value => Volatile.Read(ref _value);

    /// <summary>Arms <paramref name="deadline"/> (or clears it with <see cref="None"/>); false when it had expired first.</summary>
    public bool TrySet(long deadline)
    {
        long current = Volatile.Read(ref _value);
        while (current != Expired)
        {
            if (current == deadline)
            {
                return true;
            }

            long seen = Interlocked.CompareExchange(ref _value, deadline, current);
            if (seen == current)
            {
                _armed = deadline;
                return true;
            }

            current = seen;
        }

        return false;
    }

    /// <summary>
    /// Brings a running deadline forward to <paramref name="deadline"/> when it is later (a stopping server shortening an idle
    /// connection's keep-alive); false when it had expired, or no deadline runs.
    /// </summary>
    public bool TryBringForward(long deadline)
    {
        long current = Volatile.Read(ref _value);
        while (current != Expired && current != None)
        {
            if (current <= deadline)
            {
                return true;
            }

            long seen = Interlocked.CompareExchange(ref _value, deadline, current);
            if (seen == current)
            {
                return true;
            }

            current = seen;
        }

        return false;
    }

    /// <summary>
    /// True when the deadline last set by <see cref="TrySet"/> has passed at <paramref name="now"/>: after an expiry, tells a
    /// deadline that passed from one a stopping server expired early or brought forward (<see cref="TryBringForward"/> leaves
    /// this one as it was). For the loop that sets it.
    /// </summary>
    public bool HasPassed(long now) => _armed < NeverPasses && now >= _armed;

    /// <summary>Expires the deadline when it has passed at <paramref name="now"/>; true only for the call that expired it.</summary>
    public bool TryExpireIfPassed(long now)
    {
        long deadline = Volatile.Read(ref _value);
        return now >= deadline && TryExpire(deadline);
    }

    /// <summary>Expires whatever deadline runs, passed or not (the server is stopping); true only for the call that expired it.</summary>
    public bool TryExpireNow() => TryExpire(Volatile.Read(ref _value));

    private bool TryExpire(long deadline) =>
        deadline != Expired && deadline != None && Interlocked.CompareExchange(ref _value, Expired, deadline) == deadline;
}
