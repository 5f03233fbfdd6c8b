namespace Falconet.Http.Http2;

/// <summary>
/// A token bucket over one kind of frame a connection receives (<see cref="Http2FrameRate"/>): each frame takes a token,
/// tokens come back at the rate per second up to the burst. Read and written by the connection's read loop only; the clock
/// is read only when a counted frame arrives, never on a request's path.
/// </summary>
internal struct Http2FrameBudget
{
    private readonly double _ticksPerToken;
    private readonly int _burst;
    private double _tokens;
    private long _refilledAt;

    public Http2FrameBudget(Http2FrameRate rate, long timestampFrequency, long now)
    {
        _burst = rate.Burst;
        _tokens = rate.Burst;
        _ticksPerToken = rate.PerSecond == 0 ? double.PositiveInfinity : (double)timestampFrequency / rate.PerSecond;
        _refilledAt = now;
    }

    /// <summary>Takes a token at <paramref name="now"/>; false when none is left (the connection is past the rate).</summary>
    public bool TryTake(long now)
    {
        if (_tokens < 1)
        {
            long elapsed = now - _refilledAt;
            if (elapsed > 0 && !double.IsPositiveInfinity(_ticksPerToken))
            {
                double earned = elapsed / _ticksPerToken;
                _tokens = earned >= _burst - _tokens ? _burst : _tokens + earned;
            }

            _refilledAt = now;
            if (_tokens < 1)
            {
                return false;
            }
        }
        else if (_tokens >= _burst)
        {
            // A full bucket earns nothing while it waits: the refill clock starts at the first token taken.
            _refilledAt = now;
        }

        _tokens--;
        return true;
    }
}
