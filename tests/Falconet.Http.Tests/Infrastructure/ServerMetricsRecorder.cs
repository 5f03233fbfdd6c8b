using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using Falconet.Diagnostics;
using Falconet.Server;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>
/// Counts what the <c>Falconet.Server</c> meter records, by instrument and reason. The meter is process-wide, so the
/// tests that use this run in <see cref="ServerMetricsCollection"/>, alone.
/// </summary>
internal sealed class ServerMetricsRecorder : IDisposable
{
    private readonly MeterListener _listener = new();
    private readonly ConcurrentDictionary<(string Instrument, string Reason), long> _counts = new();

    public ServerMetricsRecorder()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == ServerMetrics.MeterName)
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            string reason = "";
            foreach (KeyValuePair<string, object?> tag in tags)
            {
                if (tag.Key == ServerMetrics.ReasonTag)
                {
                    reason = (string?)tag.Value ?? "";
                }
            }

            _counts.AddOrUpdate((instrument.Name, reason), value, (_, total) => total + value);
        });
        _listener.Start();
    }

    /// <summary>What <paramref name="instrument"/> counted with <paramref name="reason"/> so far.</summary>
    public long Count(string instrument, string reason) => _counts.TryGetValue((instrument, reason), out long count) ? count : 0;

    /// <summary>Every (reason, count) that <paramref name="instrument"/> recorded.</summary>
    public IReadOnlyDictionary<string, long> Reasons(string instrument)
    {
        var reasons = new SortedDictionary<string, long>(StringComparer.Ordinal);
        foreach (KeyValuePair<(string Instrument, string Reason), long> entry in _counts)
        {
            if (entry.Key.Instrument == instrument)
            {
                reasons[entry.Key.Reason] = entry.Value;
            }
        }

        return reasons;
    }

    public void Dispose() => _listener.Dispose();
}

/// <summary>Tests that read the process-wide <c>Falconet.Server</c> meter run alone, so no other test's server counts into them.</summary>
[CollectionDefinition(nameof(ServerMetricsCollection), DisableParallelization = true)]
public sealed class ServerMetricsCollection
{
}
