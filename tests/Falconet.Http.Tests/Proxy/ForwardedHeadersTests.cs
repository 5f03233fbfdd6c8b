using System;
using System.Net;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;
using Xunit;
using static Falconet.Http.Tests.Proxy.ProxyHeaders;

namespace Falconet.Http.Tests.Proxy;

/// <summary>
/// Forwarding headers under <see cref="FalconetServerOptions.ForwardedHeaders"/> end to end on a real socket: the handler sees
/// the client's endpoint, scheme and host a trusted proxy named, and nothing a client or an untrusted peer wrote.
/// </summary>
public class ForwardedHeadersTests : ServerTests
{
    private static readonly IPNetwork s_loopback = IPNetwork.Parse("127.0.0.0/8");

    [Fact]
    public async Task A_trusted_proxy_names_the_client_address_and_scheme()
    {
        await using TestServer host = await StartAsync(s_loopback);
        (await AskAsync(host, "X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Proto: https\r\n")).ShouldBe("203.0.113.7:0 https falconet");
    }

    [Fact]
    public async Task Headers_from_a_peer_outside_the_trusted_proxies_are_ignored()
    {
        await using TestServer host = await StartAsync(IPNetwork.Parse("10.0.0.0/8"));
        using RawClient client = host.Connect();
        await client.SendAsync(Request("X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Proto: https\r\nForwarded: for=198.51.100.1\r\n"));
        (await client.ReadResponseAsync()).BodyText.ShouldBe($"{client.Socket.LocalEndPoint} {OwnScheme(host)} falconet");
    }

    [Theory]
    [InlineData("X-Forwarded-For: 192.0.2.66, 203.0.113.7\r\n", "203.0.113.7:0")]
    [InlineData("X-Forwarded-For: 192.0.2.66\r\nX-Forwarded-For: 203.0.113.7\r\n", "203.0.113.7:0")]
    [InlineData("X-Forwarded-For: 192.0.2.66, 127.0.0.9\r\n", "192.0.2.66:0")]
    [InlineData("X-Forwarded-For: 192.0.2.66, 203.0.113.7, 127.0.0.9:8080\r\n", "203.0.113.7:0")]
    [InlineData("X-Forwarded-For: 192.0.2.66, 203.0.113.7:4711\r\n", "203.0.113.7:4711")]
    [InlineData("X-Forwarded-For: [2001:db8::7]:4711\r\n", "[2001:db8::7]:4711")]
    [InlineData("X-Forwarded-For: 2001:db8::7\r\n", "[2001:db8::7]:0")]
    public async Task The_client_is_the_nearest_hop_outside_the_trusted_proxies_and_what_a_client_wrote_before_it_is_ignored(string headers, string client)
    {
        await using TestServer host = await StartAsync(s_loopback);
        (await AskAsync(host, headers)).ShouldStartWith(client + " ");
    }

    [Theory]
    [InlineData("X-Forwarded-For: 203.0.113.7, garbage\r\n")]
    [InlineData("X-Forwarded-For: 127.1\r\n")]
    [InlineData("X-Forwarded-For: 0x7f.0.0.1\r\n")]
    [InlineData("X-Forwarded-For: 256.1.1.1\r\n")]
    [InlineData("X-Forwarded-For: 203.0.113.7:99999\r\n")]
    [InlineData("X-Forwarded-For: 203.0.113.7:\r\n")]
    [InlineData("X-Forwarded-For: [2001:db8::7\r\n")]
    [InlineData("X-Forwarded-For: fe80::1%eth0\r\n")]
    [InlineData("X-Forwarded-For: unknown\r\n")]
    [InlineData("X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Proto: gopher\r\n")]
    [InlineData("X-Forwarded-For: \"203.0.113.7\r\n")]
    [InlineData("Forwarded: for=203.0.113.7;for=198.51.100.1\r\n")]
    [InlineData("Forwarded: for=[2001:db8::7]\r\n")]
    [InlineData("Forwarded: for=\"203.0.113.7\r\n")]
    [InlineData("Forwarded: for=\"20\\3.0.113.7\"\r\n")]
    [InlineData("Forwarded: for 203.0.113.7\r\n")]
    [InlineData("Forwarded: for=203.0.113.7:4711\r\n")]
    [InlineData("Forwarded: for=203.0.113.7;host=\"bad host\"\r\n")]
    public async Task A_malformed_nearest_entry_leaves_the_connections_own_endpoint_and_scheme(string headers)
    {
        await using TestServer host = await StartAsync(s_loopback, ForwardedHeaderFields.XForwardedFor | ForwardedHeaderFields.XForwardedProto | ForwardedHeaderFields.Forwarded);
        using RawClient client = host.Connect();
        await client.SendAsync(Request(headers));
        (await client.ReadResponseAsync()).BodyText.ShouldBe($"{client.Socket.LocalEndPoint} {OwnScheme(host)} falconet");
    }

    [Fact]
    public async Task A_malformed_entry_further_left_ends_the_walk_and_keeps_what_the_trusted_hops_said()
    {
        await using TestServer host = await StartAsync(s_loopback);
        (await AskAsync(host, "X-Forwarded-For: 192.0.2.66, bogus, 127.0.0.9\r\nX-Forwarded-Proto: http, https, https\r\n"))
            .ShouldBe("127.0.0.9:0 https falconet");
    }

    [Fact]
    public async Task RFC_7239_Forwarded_gives_the_address_scheme_and_host_and_wins_over_X_Forwarded()
    {
        await using TestServer host = await StartAsync(s_loopback, ForwardedHeaderFields.Forwarded | ForwardedHeaderFields.XForwardedFor);
        (await AskAsync(host, "X-Forwarded-For: 198.51.100.1\r\n"
            + "Forwarded: for=192.0.2.66;proto=http, For=\"[2001:db8::7]:4711\";Proto=HTTPS;host=\"shop.example:8443\";by=_edge\r\n"))
            .ShouldBe("[2001:db8::7]:4711 https shop.example:8443");
    }

    [Fact]
    public async Task An_unknown_or_obfuscated_RFC_7239_node_applies_its_scheme_and_stops_the_walk()
    {
        await using TestServer host = await StartAsync(s_loopback, ForwardedHeaderFields.Forwarded);
        using RawClient client = host.Connect();
        await client.SendAsync(Request("Forwarded: for=192.0.2.66, for=\"_hidden:_port\";proto=https\r\n"));
        (await client.ReadResponseAsync()).BodyText.ShouldBe($"{client.Socket.LocalEndPoint} https falconet");
        await client.SendAsync(Request("Forwarded: for=192.0.2.66, for=unknown;proto=https\r\n"));
        (await client.ReadResponseAsync()).BodyText.ShouldBe($"{client.Socket.LocalEndPoint} https falconet");
    }

    [Fact]
    public async Task X_Forwarded_Host_is_applied_only_when_asked_for()
    {
        await using (TestServer host = await StartAsync(s_loopback))
        {
            (await AskAsync(host, "X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Host: shop.example\r\n")).ShouldBe($"203.0.113.7:0 {OwnScheme(host)} falconet");
        }

        await using (TestServer host = await StartAsync(s_loopback, ForwardedHeaderFields.XForwardedFor | ForwardedHeaderFields.XForwardedHost))
        {
            (await AskAsync(host, "X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Host: shop.example\r\n")).ShouldBe($"203.0.113.7:0 {OwnScheme(host)} shop.example");
        }
    }

    [Fact]
    public async Task The_next_request_of_the_connection_starts_again_from_its_own_headers()
    {
        await using TestServer host = await StartAsync(s_loopback);
        using RawClient client = host.Connect();
        for (int i = 0; i < 2; i++)
        {
            await client.SendAsync(Request("X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Proto: https\r\n"));
            (await client.ReadResponseAsync()).BodyText.ShouldBe("203.0.113.7:0 https falconet");
            await client.SendAsync(Request("X-Forwarded-For: 203.0.113.8\r\n"));
            (await client.ReadResponseAsync()).BodyText.ShouldBe($"203.0.113.8:0 {OwnScheme(host)} falconet");
            await client.SendAsync(Request(""));
            (await client.ReadResponseAsync()).BodyText.ShouldBe($"{client.Socket.LocalEndPoint} {OwnScheme(host)} falconet");
        }
    }

    [Fact]
    public async Task Behind_a_PROXY_protocol_balancer_the_trust_check_is_on_the_address_the_PROXY_header_gave()
    {
        await using TestServer host = await StartAsync(IPNetwork.Parse("10.0.0.0/8"), proxyProtocol: true);
        byte[] fromTrusted = V2(0x21, 0x11, [.. Address("10.1.2.3"), .. Address("10.0.0.1"), .. Ports(40000, 80)], []);
        using (RawClient client = host.Connect(preamble: fromTrusted))
        {
            await client.SendAsync(Request("X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Proto: https\r\n"));
            (await client.ReadResponseAsync()).BodyText.ShouldBe("203.0.113.7:0 https falconet");
        }

        byte[] fromClient = V2(0x21, 0x11, [.. Address("198.51.100.9"), .. Address("10.0.0.1"), .. Ports(50000, 80)], []);
        using (RawClient client = host.Connect(preamble: fromClient))
        {
            await client.SendAsync(Request("X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Proto: https\r\n"));
            (await client.ReadResponseAsync()).BodyText.ShouldBe($"198.51.100.9:50000 {OwnScheme(host)} falconet");
        }
    }

    [Fact]
    public async Task Without_a_policy_the_headers_are_the_applications_and_the_scheme_is_the_connections()
    {
        await using TestServer host = await StartServerAsync(Echo);
        using RawClient client = host.Connect();
        await client.SendAsync(Request("X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: shop.example\r\n"));
        (await client.ReadResponseAsync()).BodyText.ShouldBe($"{client.Socket.LocalEndPoint} {OwnScheme(host)} falconet");
    }

    [Theory]
    [InlineData(ForwardedHeaderFields.XForwardedFor, false, "ForwardedHeaders.TrustedProxies is empty while Endpoints[0] takes connections from IP addresses")]
    [InlineData(ForwardedHeaderFields.None, true, "ForwardedHeaders.Headers is None")]
    [InlineData((ForwardedHeaderFields)64, true, "ForwardedHeaders.Headers is 64")]
    public async Task A_policy_that_cannot_be_honoured_fails_the_start_naming_it(ForwardedHeaderFields fields, bool trusted, string message)
    {
        var policy = new ForwardedHeadersPolicy { Headers = fields };
        if (trusted)
        {
            policy.TrustedProxies.Add(s_loopback);
        }

        var options = new FalconetServerOptions { ForwardedHeaders = policy };
        options.Endpoints.Add(new IPEndPoint(IPAddress.Loopback, 0));
        await using var server = new FalconetServer(options, Echo);
        InvalidOperationException failure = await Should.ThrowAsync<InvalidOperationException>(() => server.StartAsync());
        failure.Message.ShouldContain(message);
    }

    [Fact]
    public async Task On_Unix_socket_endpoints_alone_the_proxy_is_trusted_without_networks()
    {
        string path = System.IO.Path.Combine(System.IO.Path.GetTempPath(), $"falconet-forwarded-{Guid.NewGuid():N}.sock");
        var options = new FalconetServerOptions { Transport = Transport, ForwardedHeaders = new ForwardedHeadersPolicy() };
        options.Endpoints.Add(new System.Net.Sockets.UnixDomainSocketEndPoint(path));
        await using var server = new FalconetServer(options, Echo);
        await server.StartAsync();
        using var socket = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.Unix, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Unspecified);
        await socket.ConnectAsync(new System.Net.Sockets.UnixDomainSocketEndPoint(path));
        await socket.SendAsync(Request("X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Proto: https\r\nConnection: close\r\n"));
        var received = new System.IO.MemoryStream();
        byte[] buffer = new byte[4096];
        using var timeout = new System.Threading.CancellationTokenSource(TestTimeouts.Operation);
        int count;
        while ((count = await socket.ReceiveAsync(buffer, System.Net.Sockets.SocketFlags.None, timeout.Token)) > 0)
        {
            received.Write(buffer, 0, count);
        }

        Encoding.ASCII.GetString(received.ToArray()).ShouldEndWith("\r\n\r\n203.0.113.7:0 https falconet");
        await server.StopAsync();
    }

    private static ValueTask Echo(HttpContext context)
    {
        context.Response.Write(Encoding.ASCII.GetBytes($"{context.RemoteEndPoint} {context.Request.Scheme} {context.Request.Host}"));
        return default;
    }

    private Task<TestServer> StartAsync(IPNetwork trusted, ForwardedHeaderFields? fields = null, bool proxyProtocol = false)
        => StartServerAsync(Echo, options =>
        {
            var policy = new ForwardedHeadersPolicy();
            if (fields is { } headers)
            {
                policy.Headers = headers;
            }

            policy.TrustedProxies.Add(trusted);
            options.ForwardedHeaders = policy;
            if (!proxyProtocol)
            {
                return;
            }

            if (options.HttpsEndpoints.Count > 0)
            {
                HttpsEndpoint https = options.HttpsEndpoints[0];
                options.HttpsEndpoints[0] = new HttpsEndpoint(new ProxyProtocolEndPoint(https.EndPoint), https.Tls);
            }
            else
            {
                options.Endpoints[0] = new ProxyProtocolEndPoint(options.Endpoints[0]);
            }
        });

    private static async Task<string> AskAsync(TestServer host, string headers)
    {
        using RawClient client = host.Connect();
        await client.SendAsync(Request(headers));
        return (await client.ReadResponseAsync()).BodyText;
    }

    private static string OwnScheme(TestServer host) => host.IsHttps ? "https" : "http";

    private static byte[] Request(string headers) => Encoding.ASCII.GetBytes($"GET / HTTP/1.1\r\nHost: falconet\r\n{headers}\r\n");
}

public sealed class ForwardedHeadersTestsOverTlsOnLibuv : ForwardedHeadersTests
{
    protected override TransportKind Transport => TransportKind.Libuv;

    protected override bool Https => true;
}

public sealed class ForwardedHeadersTestsOverTlsOnIoUring : ForwardedHeadersTests
{
    protected override TransportKind Transport => TransportKind.IoUring;

    protected override bool Https => true;
}
