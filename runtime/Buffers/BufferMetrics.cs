using System;
using System.Collections.Generic;
using System.Diagnostics.Metrics;

namespace Falconet.Buffers;

/// <summary>Publishes the counters of every live <see cref="SlabMemoryPool"/> through the <c>Falconet.Buffers</c> meter.</summary>
/// <remarks>
/// Instruments are observable: the pools keep plain counters and nothing is recorded on rent or return; a
/// listener (dotnet-counters, a MeterListener, OpenTelemetry) reads them when it collects. Measurements carry
/// the tag <c>falconet.pool</c> with the pool name; pools sharing a name are summed.
/// </remarks>
public static class BufferMetrics
{
    /// <summary>Name of the meter.</summary>
    public const string MeterName = "Falconet.Buffers";

    /// <summary>Observable counter: blocks rented since the pool was created.</summary>
    public const string BlocksRentedName = "falconet.buffers.blocks.rented";

    /// <summary>Observable up-down counter: blocks rented and not yet returned.</summary>
    public const string BlocksInUseName = "falconet.buffers.blocks.in_use";

    /// <summary>Observable counter: slabs allocated on the pinned object heap.</summary>
    public const string SlabsAllocatedName = "falconet.buffers.slabs.allocated";

    /// <summary>Observable counter: slabs given back to the garbage collector after the pool was idle.</summary>
    public const string SlabsReleasedName = "falconet.buffers.slabs.released";

    /// <summary>Tag that carries the pool name.</summary>
    public const string PoolTag = "falconet.pool";

    private static readonly List<WeakReference<SlabMemoryPool>> s_pools = new();
    private static readonly Meter s_meter = CreateMeter();

    private static Meter CreateMeter()
    {
        var meter = new Meter(MeterName, "1.0");
        meter.CreateObservableCounter(BlocksRentedName, static () => Observe(static p => p.BlocksRented), "{block}", "Blocks rented since the pool was created.");
        meter.CreateObservableUpDownCounter(BlocksInUseName, static () => Observe(static p => p.BlocksOutstanding), "{block}", "Blocks rented and not yet returned.");
        meter.CreateObservableCounter(SlabsAllocatedName, static () => Observe(static p => p.SlabsAllocated), "{slab}", "Slabs allocated on the pinned object heap.");
        meter.CreateObservableCounter(SlabsReleasedName, static () => Observe(static p => p.SlabsReleased), "{slab}", "Slabs given back to the garbage collector after the pool was idle.");
        return meter;
    }

    internal static void Register(SlabMemoryPool pool)
    {
        _ = s_meter;
        lock (s_pools)
        {
            s_pools.Add(new WeakReference<SlabMemoryPool>(pool));
        }
    }

    internal static void Unregister(SlabMemoryPool pool)
    {
        lock (s_pools)
        {
            s_pools.RemoveAll(w => !w.TryGetTarget(out SlabMemoryPool? p) || ReferenceEquals(p, pool));
        }
    }

    private static List<Measurement<long>> Observe(Func<SlabMemoryPool, long> read)
    {
        var names = new List<string>();
        var values = new List<long>();
        lock (s_pools)
        {
            s_pools.RemoveAll(static w => !w.TryGetTarget(out _));
            foreach (WeakReference<SlabMemoryPool> weak in s_pools)
            {
                if (!weak.TryGetTarget(out SlabMemoryPool? pool))
                {
                    continue;
                }

                int index = names.IndexOf(pool.Name);
                if (index < 0)
                {
                    names.Add(pool.Name);
                    values.Add(read(pool));
                }
                else
                {
                    values[index] += read(pool);
                }
            }
        }

        var measurements = new List<Measurement<long>>(names.Count);
        for (int i = 0; i < names.Count; i++)
        {
            measurements.Add(new Measurement<long>(values[i], new KeyValuePair<string, object?>(PoolTag, names[i])));
        }

        return measurements;
    }
}
