using System;
using System.Linq;
using System.Net;
using System.Threading.Tasks;
using Falconet.Diagnostics;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Microsoft.Extensions.Logging;
using Shouldly;

namespace Falconet.Http.Tests.Server;

/// <summary>The limit of open connections: the excess is refused cheaply, counted and logged, and a freed place is taken again.</summary>
[Collection(nameof(ServerMetricsCollection))]
public class ConnectionLimitTests : ServerTests
{
    private const int ConnectionRefusedEvent = 110;

    // Connections the transport itself counts as open (the sockets transport leaves the count to the server).
    private static int TransportOpenConnections(TestServer host) => host.Server.Transport switch
    {
        Falconet.Transport.Libuv.LibuvTransportFactory libuv => libuv.OpenConnections,
        Falconet.Transport.IoUring.IoUringTransportFactory ioUring => ioUring.OpenConnections,
        _ => host.Server.ConnectionCount,
    };

    private static ValueTask Hello(HttpContext context)
    {
        context.Response.Write("hello"u8);
        return default;
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Connections_past_the_limit_are_refused_at_once_and_a_freed_place_is_taken_again()
    {
        using var metrics = new ServerMetricsRecorder();
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartServerAsync(Hello, options =>
        {
            options.MaxConnections = 2;
            options.LoggerFactory = logs;
        });
        host.Server.MaxConnections.ShouldBe(2);

        using RawClient first = host.Connect();
        using RawClient second = host.Connect();
        foreach (RawClient client in new[] { first, second })
        {
            await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
            (await client.ReadResponseAsync()).BodyText.ShouldBe("hello");
        }

        using (RawClient third = host.Connect())
        {
            // Closed without a response, whether or not its request got through.
            try
            {
                await third.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
            }
            catch (System.Net.Sockets.SocketException)
            {
            }

            (await third.IsClosedByServerAsync()).ShouldBeTrue();
        }

        host.Server.RefusedConnectionCount.ShouldBe(1);
        metrics.Count(ServerMetrics.RejectedConnectionsName, "connection_limit").ShouldBe(1);
        if (Transport == TransportKind.Sockets)
        {
            // The libuv and io_uring transports refuse on their loop, before the server sees the connection.
            logs.Entries.ShouldContain(e => e.EventId == ConnectionRefusedEvent && e.Level == LogLevel.Debug);
        }

        // A place frees up: the next connection is served. The loop transports count a connection until its descriptor is
        // closed on the loop, which can come a moment after the server let go of it: both counts must have dropped.
        first.Dispose();
        for (int i = 0; i < 500 && (host.Server.ConnectionCount > 1 || TransportOpenConnections(host) > 1); i++)
        {
            await Task.Delay(10);
        }

        using RawClient fourth = host.Connect();
        await fourth.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await fourth.ReadResponseAsync()).BodyText.ShouldBe("hello");
        await second.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await second.ReadResponseAsync()).BodyText.ShouldBe("hello");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task TLS_handshakes_in_progress_take_places_of_the_limit_and_a_failed_one_gives_its_place_back()
    {
        using var metrics = new ServerMetricsRecorder();
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartServerAsync(Hello, options =>
        {
            options.MaxConnections = 2;
            options.LoggerFactory = logs;
            options.Endpoints.Clear();
            options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0), TestCertificates.Server));
        });
        IPEndPoint https = host.Server.BoundHttpsEndpoints[0];

        // Two clients that connect and never start their handshake hold both places.
        using RawClient stalled = RawClient.Connect(https);
        using RawClient stalledToo = RawClient.Connect(https);
        for (int i = 0; i < 500 && host.Server.ConnectionCount < 2; i++)
        {
            await Task.Delay(10);
        }

        host.Server.ConnectionCount.ShouldBe(2);

        // A third is refused before its handshake (the client may see the reset before the server has counted it).
        Should.Throw<Exception>(() => RawClient.ConnectTls(https).Dispose());
        for (int i = 0; i < 500 && (host.Server.RefusedConnectionCount < 1 || metrics.Count(ServerMetrics.RejectedConnectionsName, "connection_limit") < 1); i++)
        {
            await Task.Delay(10);
        }

        host.Server.RefusedConnectionCount.ShouldBe(1);
        metrics.Count(ServerMetrics.RejectedConnectionsName, "connection_limit").ShouldBe(1);

        // A handshake that fails gives its place back: the next client is served.
        stalled.Dispose();
        await TlsProbe.WaitForFailedHandshakeAsync(logs, "closed_by_peer");
        for (int i = 0; i < 500 && host.Server.ConnectionCount > 1; i++)
        {
            await Task.Delay(10);
        }

        using RawClient served = RawClient.ConnectTls(https);
        await served.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await served.ReadResponseAsync()).BodyText.ShouldBe("hello");
        host.Server.ConnectionCount.ShouldBe(2);
    }

    [Fact]
    public void The_default_limit_leaves_a_reserve_of_an_eighth_of_the_descriptors_and_at_least_64()
    {
        DescriptorLimit.DefaultMaxConnections(limit: 1024, open: 40).ShouldBe(1024 - 40 - 128);
        DescriptorLimit.DefaultMaxConnections(limit: 256, open: 60).ShouldBe(256 - 60 - 64);
        DescriptorLimit.DefaultMaxConnections(limit: 100, open: 60).ShouldBe(1);
        DescriptorLimit.DefaultMaxConnections(limit: 1_048_576, open: 30).ShouldBe(1_048_576 - 30 - 131_072);
    }

    [Fact]
    public void The_descriptor_limit_read_is_the_process_s_own()
    {
        // /proc/self/limits shows RLIMIT_NOFILE as the kernel sees it: "Max open files  <soft>  <hard>  files".
        string line = System.IO.File.ReadAllLines("/proc/self/limits").Single(l => l.StartsWith("Max open files", StringComparison.Ordinal));
        string soft = line["Max open files".Length..].Trim().Split(' ', StringSplitOptions.RemoveEmptyEntries)[0];

        DescriptorLimit.SoftLimit().ShouldBe(soft == "unlimited" ? null : long.Parse(soft, System.Globalization.CultureInfo.InvariantCulture));
        DescriptorLimit.OpenNow().ShouldNotBeNull().ShouldBeGreaterThan(3);
    }
}

/// <summary>The same tests on the libuv transport.</summary>
[Collection(nameof(ServerMetricsCollection))]
public sealed class ConnectionLimitTestsOnLibuv : ConnectionLimitTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

public sealed class ConnectionLimitTestsOnIoUring : ConnectionLimitTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
