using System;
using Falconet.Http;

namespace Falconet.Server;

/// <summary>A data rate a client must keep up while the server waits on it, enforced once a grace period has passed.</summary>
/// <remarks>
/// Used for <see cref="FalconetServerOptions.MinRequestBodyDataRate"/> (a body that arrives too slowly is answered 408)
/// and <see cref="FalconetServerOptions.MinResponseDataRate"/> (a client that reads too slowly is reset).
/// </remarks>
public sealed class MinDataRate
{
    /// <summary>Creates a minimum rate of <paramref name="bytesPerSecond"/>, enforced after <paramref name="gracePeriod"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The rate is not a positive finite number, or the grace period is negative.</exception>
    public MinDataRate(double bytesPerSecond, TimeSpan gracePeriod)
    {
        if (!double.IsFinite(bytesPerSecond) || bytesPerSecond <= 0)
        {
            throw new ArgumentOutOfRangeException(nameof(bytesPerSecond), bytesPerSecond, "The rate must be a positive number of bytes per second.");
        }

        ArgumentOutOfRangeException.ThrowIfLessThan(gracePeriod, TimeSpan.Zero, nameof(gracePeriod));
        BytesPerSecond = bytesPerSecond;
        GracePeriod = gracePeriod;
    }

    /// <summary>The least bytes per second the client must average.</summary>
    public double BytesPerSecond { get; }

    /// <summary>How long the server waits on the client before the rate is enforced.</summary>
    public TimeSpan GracePeriod { get; }

    /// <summary>This rate in the units the connection checks it in: timestamp ticks of <paramref name="clock"/>.</summary>
    internal DataRateLimit ToLimit(TimeProvider clock) => new(BytesPerSecond, GracePeriod, clock.TimestampFrequency);

    /// <inheritdoc/>
    public override string ToString() => $"{BytesPerSecond} B/s after {GracePeriod}";
}
