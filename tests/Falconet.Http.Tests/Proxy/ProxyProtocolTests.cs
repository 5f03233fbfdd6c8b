using System;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using Falconet.Diagnostics;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport.Proxy;
using Shouldly;
using Xunit;
using static Falconet.Http.Tests.Proxy.ProxyHeaders;

namespace Falconet.Http.Tests.Proxy;

/// <summary>
/// PROXY protocol endpoints end to end on a real socket: on the sockets transport here, on libuv, and under TLS (the header
/// before the handshake) in the derived classes.
/// </summary>
[Collection(nameof(ServerMetricsCollection))]
public class ProxyProtocolTests : ServerTests
{
    [Fact]
    public async Task The_client_address_of_a_version_2_header_is_the_connections_remote_endpoint()
    {
        await using TestServer host = await StartProxyServerAsync();
        byte[] header = [.. V2(0x21, 0x11, [.. Address("203.0.113.7"), .. Address("10.0.0.1"), .. Ports(51234, 443)],
            Tlv(ProxyTlvs.Authority, "shop.example"u8)), .. Request("/")];
        using RawClient client = host.Connect(preamble: host.IsHttps ? header[..^Request("/").Length] : header);
        if (host.IsHttps)
        {
            await client.SendAsync(Request("/"));
        }

        RawResponse response = await client.ReadResponseAsync();
        response.BodyText.ShouldBe("203.0.113.7:51234 v2 Proxy shop.example");

        // The same connection keeps the client's address for its next request.
        await client.SendAsync(Request("/"));
        (await client.ReadResponseAsync()).BodyText.ShouldBe("203.0.113.7:51234 v2 Proxy shop.example");
    }

    [Fact]
    public async Task A_version_1_header_sent_with_the_first_request_hands_the_rest_of_the_bytes_to_HTTP()
    {
        await using TestServer host = await StartProxyServerAsync();
        byte[] header = Encoding.ASCII.GetBytes("PROXY TCP6 2001:db8::9 2001:db8::1 4000 80\r\n");
        byte[] twoRequests = [.. Request("/"), .. Request("/")];
        using RawClient client = host.Connect(preamble: host.IsHttps ? header : [.. header, .. twoRequests]);
        if (host.IsHttps)
        {
            await client.SendAsync(twoRequests);
        }

        (await client.ReadResponseAsync()).BodyText.ShouldBe("[2001:db8::9]:4000 v1 Proxy -");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("[2001:db8::9]:4000 v1 Proxy -");
    }

    [Fact]
    public async Task A_LOCAL_header_of_a_health_check_keeps_the_proxys_own_address()
    {
        await using TestServer host = await StartProxyServerAsync();
        byte[] local = V2(0x20, 0x00, [], []);
        using RawClient client = host.Connect(preamble: local);
        await client.SendAsync(Request("/"));
        string body = (await client.ReadResponseAsync()).BodyText;
        body.ShouldBe($"{client.Socket.LocalEndPoint} v2 Local -");
    }

    [Fact]
    public async Task A_header_that_arrives_a_byte_at_a_time_is_read_whole()
    {
        await using TestServer host = await StartProxyServerAsync();
        byte[] header = Encoding.ASCII.GetBytes("PROXY TCP4 198.51.100.4 192.0.2.1 7000 80\r\n");
        using RawClient client = host.Connect(preamble: header, trickle: true);
        await client.SendAsync(Request("/"));
        (await client.ReadResponseAsync()).BodyText.ShouldBe("198.51.100.4:7000 v1 Proxy -");
    }

    [Fact]
    public async Task A_connection_without_a_header_is_closed_counted_and_never_reaches_the_application()
    {
        using var metrics = new ServerMetricsRecorder();
        bool called = false;
        await using TestServer host = await StartProxyServerAsync(_ => called = true);
        using RawClient client = RawClient.Connect(host.EndPoint);
        await client.SendAsync(Request("/"));
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
        called.ShouldBeFalse();
        metrics.Count(ServerMetrics.RejectedConnectionsName, "proxy_header_missing").ShouldBe(1);
    }

    [Fact]
    public async Task A_malformed_header_is_closed_and_counted_with_its_reason()
    {
        using var metrics = new ServerMetricsRecorder();
        await using TestServer host = await StartProxyServerAsync();
        using RawClient client = RawClient.Connect(host.EndPoint, preamble: "PROXY TCP4 1.2.3 4.5.6.7 1 2\r\n"u8.ToArray());
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
        metrics.Count(ServerMetrics.RejectedConnectionsName, "proxy_header_malformed").ShouldBe(1);
    }

    [Fact]
    public async Task A_peer_outside_the_trusted_proxies_is_refused_before_anything_is_read()
    {
        using var metrics = new ServerMetricsRecorder();
        await using TestServer host = await StartProxyServerAsync(trusted: IPNetwork.Parse("10.0.0.0/8"));
        using RawClient client = RawClient.Connect(host.EndPoint);
        try
        {
            await client.SendAsync("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n");
        }
        catch (SocketException)
        {
            // The reset can arrive before the header is sent: that is the refusal too.
        }

        (await client.IsClosedByServerAsync()).ShouldBeTrue();

        // The server resets first and counts after: the client may see the reset before the count is made.
        var deadline = DateTime.UtcNow + TestTimeouts.Operation;
        while (metrics.Count(ServerMetrics.RejectedConnectionsName, "proxy_untrusted_peer") == 0 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(10);
        }

        metrics.Count(ServerMetrics.RejectedConnectionsName, "proxy_untrusted_peer").ShouldBe(1);
    }

    [Fact]
    public async Task A_header_that_never_completes_is_closed_once_its_deadline_passes()
    {
        using var metrics = new ServerMetricsRecorder();
        await using TestServer host = await StartProxyServerAsync(timeout: TimeSpan.FromMilliseconds(500));
        using RawClient client = RawClient.Connect(host.EndPoint, preamble: "PROXY TCP4 1.2.3.4"u8.ToArray());
        DateTime started = DateTime.UtcNow;
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
        (DateTime.UtcNow - started).ShouldBeLessThan(TimeSpan.FromSeconds(5));
        metrics.Count(ServerMetrics.RejectedConnectionsName, "proxy_header_timeout").ShouldBe(1);
    }

    private Task<TestServer> StartProxyServerAsync(Action<HttpContext>? seen = null, IPNetwork? trusted = null, TimeSpan? timeout = null) =>
        StartServerAsync(context =>
        {
            seen?.Invoke(context);
            ProxyProtocolInfo? info = context.GetProxyProtocolInfo();
            context.Response.Write(Encoding.ASCII.GetBytes($"{context.RemoteEndPoint} v{info?.Version} {info?.Command} {info?.Authority ?? "-"}"));
            return default;
        }, options =>
        {
            ProxyProtocolEndPoint Wrap(EndPoint endpoint)
            {
                var proxy = new ProxyProtocolEndPoint(endpoint) { HeaderTimeout = timeout ?? TimeSpan.FromSeconds(5) };
                if (trusted is { } network)
                {
                    proxy.TrustedProxies.Add(network);
                }

                return proxy;
            }

            if (options.HttpsEndpoints.Count > 0)
            {
                HttpsEndpoint https = options.HttpsEndpoints[0];
                options.HttpsEndpoints[0] = new HttpsEndpoint(Wrap(https.EndPoint), https.Tls);
            }
            else
            {
                options.Endpoints[0] = Wrap(options.Endpoints[0]);
            }
        });

    private static byte[] Request(string path) => Encoding.ASCII.GetBytes($"GET {path} HTTP/1.1\r\nHost: falconet\r\n\r\n");
}

public sealed class ProxyProtocolTestsOnLibuv : ProxyProtocolTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

public sealed class ProxyProtocolTestsOverTls : ProxyProtocolTests
{
    protected override bool Https => true;
}

public sealed class ProxyProtocolTestsOverTlsOnLibuv : ProxyProtocolTests
{
    protected override TransportKind Transport => TransportKind.Libuv;

    protected override bool Https => true;
}
