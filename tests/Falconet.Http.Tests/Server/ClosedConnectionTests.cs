using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using Falconet.Diagnostics;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Microsoft.Extensions.Logging;
using Shouldly;

namespace Falconet.Http.Tests.Server;

/// <summary>Every close the server initiates is logged at debug level with its reason and counted in <c>falconet.server.closed_connections</c>.</summary>
[Collection(nameof(ServerMetricsCollection))]
public class ClosedConnectionTests : ServerTests
{
    private const int ClosedByServerEvent = 40;

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Each_server_initiated_close_is_logged_and_counted_with_its_reason_and_a_client_close_is_not()
    {
        using var metrics = new ServerMetricsRecorder();
        var clock = new ManualTimeProvider();
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Write("ok"u8);
            return default;
        }, options =>
        {
            options.TimeProvider = clock;
            options.HeartbeatInterval = TimeSpan.FromSeconds(1);
            options.KeepAliveTimeout = TimeSpan.FromSeconds(10);
            options.RequestHeadersTimeout = TimeSpan.FromSeconds(5);
            options.LoggerFactory = logs;
        });

        using (RawClient closing = host.Connect())
        {
            await closing.SendAsync("GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
            (await closing.ReadResponseAsync()).StatusCode.ShouldBe(200);
            (await closing.IsClosedByServerAsync()).ShouldBeTrue();
        }

        using (RawClient malformed = host.Connect())
        {
            await malformed.SendAsync("GET / HTTP/1.1\r\nHost: test\r\nNo colon here\r\n\r\n");
            (await malformed.ReadResponseAsync()).StatusCode.ShouldBe(400);
            (await malformed.IsClosedByServerAsync()).ShouldBeTrue();
        }

        using (RawClient leaving = host.Connect())
        {
            await leaving.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
            (await leaving.ReadResponseAsync()).StatusCode.ShouldBe(200);
        }

        using RawClient idle = host.Connect();
        using RawClient slow = host.Connect();
        await slow.SendAsync("GET / HTTP/1.1\r\nHost: te");
        Task<RawResponse> timedOut = slow.ReadResponseAsync();
        Task<int> idleEnd = idle.ReceiveEndAsync();
        (await clock.AdvanceUntilAsync(() => timedOut.IsCompleted && idleEnd.IsCompleted && host.Server.ConnectionCount == 0, TimeSpan.FromSeconds(1))).ShouldBeTrue();
        (await timedOut).StatusCode.ShouldBe(408);
        (await idleEnd).ShouldBe(0);

        var expected = new Dictionary<string, long>
        {
            ["bad_request"] = 1,
            ["connection_close"] = 1,
            ["keep_alive_timeout"] = 1,
            ["request_headers_timeout"] = 1,
        };
        metrics.Reasons(ServerMetrics.ClosedConnectionsName).ShouldBe(expected);
        metrics.Count(ServerMetrics.RejectedRequestsName, "request_headers_timeout").ShouldBe(1);

        string[] logged = logs.Entries.Where(e => e.EventId == ClosedByServerEvent).Select(e => e.Message).ToArray();
        logs.Entries.Where(e => e.EventId == ClosedByServerEvent).ShouldAllBe(e => e.Level == LogLevel.Debug);
        logged.Length.ShouldBe(4);
        foreach (string reason in expected.Keys)
        {
            logged.ShouldContain(message => message.EndsWith($"({reason})", StringComparison.Ordinal));
        }
    }
}

/// <summary>The same tests on the libuv transport.</summary>
[Collection(nameof(ServerMetricsCollection))]
public sealed class ClosedConnectionTestsOnLibuv : ClosedConnectionTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

public sealed class ClosedConnectionTestsOnIoUring : ClosedConnectionTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
