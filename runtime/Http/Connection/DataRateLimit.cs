using System;

namespace Falconet.Http;

/// <summary>A minimum data rate in timestamp units of the server's clock, converted once per server; default: no limit.</summary>
internal readonly struct DataRateLimit
{
    private readonly double _ticksPerByte;
    private readonly long _graceTicks;

    /// <summary>A limit of <paramref name="bytesPerSecond"/> (positive) enforced after <paramref name="gracePeriod"/>, for a clock of <paramref name="frequency"/> ticks per second.</summary>
    public DataRateLimit(double bytesPerSecond, TimeSpan gracePeriod, long frequency)
    {
        _ticksPerByte = frequency / bytesPerSecond;
        _graceTicks = (long)(gracePeriod.TotalSeconds * frequency);
    }

    public bool Enabled => _ticksPerByte > 0;

    /// <summary>How long <paramref name="bytes"/> may take: their time at the rate, and never less than the grace period.</summary>
    public long AllowedTicks(long bytes) => Math.Max(_graceTicks, (long)Math.Min(bytes * _ticksPerByte, long.MaxValue / 2));

    /// <summary>True when <paramref name="bytes"/> over <paramref name="ticks"/> of waiting, past the grace period, is below the rate.</summary>
    public bool IsBelow(long bytes, long ticks) => Enabled && ticks > _graceTicks && bytes * _ticksPerByte < ticks;
}
