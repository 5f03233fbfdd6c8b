using System;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Threading.Tasks;
using Falconet.Buffers;
using Shouldly;

namespace Falconet.Runtime.Tests.Buffers;

public sealed class BufferMetricsTests
{
    [Fact(Timeout = 20_000)]
    public Task Meter_publishes_blocks_rented_in_use_and_slabs_per_pool() => SlabMemoryPoolTests.OnOwnThread(() =>
    {
        string name = "metrics-" + Guid.NewGuid().ToString("N");
        using var pool = new SlabMemoryPool(name);
        var values = new Dictionary<string, long>();
        var published = new HashSet<string>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == BufferMetrics.MeterName)
            {
                published.Add(instrument.Name);
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            foreach (KeyValuePair<string, object?> tag in tags)
            {
                if (tag.Key == BufferMetrics.PoolTag && (string?)tag.Value == name)
                {
                    values[instrument.Name] = value;
                }
            }
        });
        listener.Start();

        MemoryBlock a = pool.Rent();
        MemoryBlock b = pool.Rent();
        MemoryBlock c = pool.Rent();
        pool.Return(b);
        listener.RecordObservableInstruments();

        published.ShouldContain(BufferMetrics.BlocksRentedName);
        published.ShouldContain(BufferMetrics.BlocksInUseName);
        published.ShouldContain(BufferMetrics.SlabsAllocatedName);
        values[BufferMetrics.BlocksRentedName].ShouldBe(3);
        values[BufferMetrics.BlocksInUseName].ShouldBe(2);
        values[BufferMetrics.SlabsAllocatedName].ShouldBe(1);

        pool.Return(a);
        pool.Return(c);
        listener.RecordObservableInstruments();
        values[BufferMetrics.BlocksInUseName].ShouldBe(0);

        // A disposed pool is no longer observed.
        pool.Dispose();
        values.Clear();
        listener.RecordObservableInstruments();
        values.ShouldBeEmpty();
    });
}
