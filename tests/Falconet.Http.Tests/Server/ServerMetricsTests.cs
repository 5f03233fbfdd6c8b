using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Linq;
using System.Threading.Tasks;
using Falconet.Diagnostics;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Server;

/// <summary>Runs alone: a MeterListener hears every server of the process.</summary>
[CollectionDefinition(nameof(MetricsCollection), DisableParallelization = true)]
public sealed class MetricsCollection
{
}

/// <summary>The request and connection instruments of the Falconet.Server meter, heard through a MeterListener.</summary>
[Collection(nameof(MetricsCollection))]
public class ServerMetricsTests : ServerTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Request_duration_is_recorded_with_method_status_and_protocol_and_the_error_type_of_a_failure()
    {
        using var recorder = new MetricsRecorder();
        await using (TestServer host = await StartServerAsync(context =>
        {
            if (context.Request.PathBytes.SequenceEqual("/fail"u8))
            {
                throw new InvalidOperationException("boom");
            }

            context.Response.StatusCode = 299;
            return default;
        }))
        {
            using RawClient client = host.Connect();
            await client.SendAsync("GET /a HTTP/1.1\r\nHost: test\r\n\r\nPOST /b HTTP/1.0\r\nHost: test\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n");
            (await client.ReadResponseAsync()).StatusCode.ShouldBe(299);
            (await client.ReadResponseAsync()).StatusCode.ShouldBe(299);
            await client.SendAsync("GET /fail HTTP/1.1\r\nHost: test\r\n\r\n");
            (await client.ReadResponseAsync()).StatusCode.ShouldBe(500);
        }

        Measurement[] durations = recorder.Of(ServerMetrics.RequestDurationName);
        Measurement get = durations.Single(m => m.Tag("http.request.method") == "GET" && m.Tag("http.response.status_code") == "299");
        get.Tag("network.protocol.name").ShouldBe("http");
        get.Tag("network.protocol.version").ShouldBe("1.1");
        get.Tag("url.scheme").ShouldBe("http");
        get.Value.ShouldBeGreaterThanOrEqualTo(0);
        get.Tag("error.type").ShouldBeNull();

        durations.Single(m => m.Tag("http.request.method") == "POST").Tag("network.protocol.version").ShouldBe("1.0");
        Measurement failed = durations.Single(m => m.Tag("http.response.status_code") == "500");
        failed.Tag("error.type").ShouldBe(typeof(InvalidOperationException).FullName);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Active_requests_count_a_request_while_its_handler_runs_and_balance_to_zero()
    {
        using var recorder = new MetricsRecorder();
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        long activeWhileRunning;
        await using (TestServer host = await StartServerAsync(async context =>
        {
            entered.TrySetResult();
            await release.Task;
        }))
        {
            using RawClient client = host.Connect();
            await client.SendAsync("DELETE /x HTTP/1.1\r\nHost: test\r\n\r\n");
            await entered.Task.WaitAsync(TestTimeouts.Operation);
            activeWhileRunning = recorder.Sum(ServerMetrics.ActiveRequestsName);
            release.TrySetResult();
            (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
        }

        activeWhileRunning.ShouldBe(1);
        recorder.Sum(ServerMetrics.ActiveRequestsName).ShouldBe(0);
        Measurement added = recorder.Of(ServerMetrics.ActiveRequestsName).First();
        added.Tag("http.request.method").ShouldBe("DELETE");
        added.Tag("url.scheme").ShouldBe("http");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Connections_are_counted_while_open_and_their_duration_recorded_when_they_close()
    {
        using var recorder = new MetricsRecorder();
        long activeWhileOpen;
        int port;
        await using (TestServer host = await StartServerAsync(context => default))
        {
            port = host.EndPoint.Port;
            using (RawClient first = host.Connect())
            using (RawClient second = host.Connect())
            {
                await first.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
                await second.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
                await first.ReadResponseAsync();
                await second.ReadResponseAsync();
                activeWhileOpen = recorder.Sum(ServerMetrics.ActiveConnectionsName);
            }
        }

        activeWhileOpen.ShouldBe(2);
        recorder.Sum(ServerMetrics.ActiveConnectionsName).ShouldBe(0);
        recorder.Sum(ServerMetrics.QueuedConnectionsName).ShouldBe(0);
        recorder.Of(ServerMetrics.QueuedConnectionsName).Count(m => m.Value > 0).ShouldBe(2);
        Measurement[] durations = recorder.Of(ServerMetrics.ConnectionDurationName);
        durations.Length.ShouldBe(2);
        durations.ShouldAllBe(m => m.Tag("network.transport") == "tcp" && m.Tag("network.type") == "ipv4" && m.Tag("server.port") == port.ToString(System.Globalization.CultureInfo.InvariantCulture));
    }

    /// <summary>One measurement: its value and its tags as strings.</summary>
    internal sealed record Measurement(string Instrument, double Value, Dictionary<string, string?> Tags)
    {
        public string? Tag(string name) => Tags.TryGetValue(name, out string? value) ? value : null;
    }

    /// <summary>Listens to every instrument of the Falconet.Server meter while it lives.</summary>
    internal sealed class MetricsRecorder : IDisposable
    {
        private readonly MeterListener _listener = new();
        private readonly ConcurrentQueue<Measurement> _measurements = new();

        public MetricsRecorder()
        {
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Name == ServerMetrics.MeterName)
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => Add(instrument, value, tags));
            _listener.SetMeasurementEventCallback<double>((instrument, value, tags, _) => Add(instrument, value, tags));
            _listener.Start();
        }

        public Measurement[] Of(string instrument) => _measurements.Where(m => m.Instrument == instrument).ToArray();

        public long Sum(string instrument) => (long)Of(instrument).Sum(m => m.Value);

        public void Dispose() => _listener.Dispose();

        private void Add(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
        {
            var copy = new Dictionary<string, string?>();
            foreach (KeyValuePair<string, object?> tag in tags)
            {
                copy[tag.Key] = Convert.ToString(tag.Value, System.Globalization.CultureInfo.InvariantCulture);
            }

            _measurements.Enqueue(new Measurement(instrument.Name, value, copy));
        }
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class ServerMetricsTestsOnLibuv : ServerMetricsTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class ServerMetricsTestsOnIoUring : ServerMetricsTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
