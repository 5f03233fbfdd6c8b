using System;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.HttpOverrides;
using Shouldly;

namespace Falconet.AspNetCore.Tests;

/// <summary>
/// ASP.NET Core behind a proxy on Falconet: the framework's ForwardedHeadersMiddleware works unchanged, and a PROXY protocol
/// endpoint hands the client's address to <see cref="IHttpConnectionFeature"/>.
/// </summary>
public class DeploymentTests
{
    protected virtual TransportKind Transport => TransportKind.Sockets;

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task ForwardedHeadersMiddleware_applies_the_forwarded_client_scheme_and_host_from_a_trusted_proxy()
    {
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(Transport, app =>
        {
            // Loopback is a known proxy by default, as the test client connects from it.
            app.UseForwardedHeaders(new ForwardedHeadersOptions { ForwardedHeaders = ForwardedHeaders.All });
            app.MapGet("/who", (HttpContext context) =>
                $"{context.Connection.RemoteIpAddress}:{context.Connection.RemotePort} {context.Request.Scheme} {context.Request.Host}");
        });

        using RawClient client = host.Connect();
        await client.SendAsync("GET /who HTTP/1.1\r\nHost: internal:8080\r\nX-Forwarded-For: 203.0.113.9:4711\r\n"
            + "X-Forwarded-Proto: https\r\nX-Forwarded-Host: shop.example\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("203.0.113.9:4711 https shop.example");

        // Without the headers the connection's own values stand, on the same connection.
        await client.SendAsync("GET /who HTTP/1.1\r\nHost: internal:8080\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe($"127.0.0.1:{((IPEndPoint)client.Socket.LocalEndPoint!).Port} http internal:8080");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task ForwardedHeadersMiddleware_ignores_the_headers_from_a_proxy_it_does_not_know()
    {
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(Transport, app =>
        {
            var options = new ForwardedHeadersOptions { ForwardedHeaders = ForwardedHeaders.All };
            options.KnownProxies.Clear();
            options.KnownIPNetworks.Clear();
            options.KnownProxies.Add(IPAddress.Parse("10.1.1.1"));
            app.UseForwardedHeaders(options);
            app.MapGet("/who", (HttpContext context) => $"{context.Connection.RemoteIpAddress} {context.Request.Scheme}");
        });

        using RawClient client = host.Connect();
        await client.SendAsync("GET /who HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.9\r\nX-Forwarded-Proto: https\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("127.0.0.1 http");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_PROXY_protocol_endpoint_gives_IHttpConnectionFeature_the_clients_address()
    {
        await using AspNetTestApp host = await AspNetTestApp.StartAsync(Transport, app =>
            app.MapGet("/who", (HttpContext context) =>
            {
                IHttpConnectionFeature connection = context.Features.Get<IHttpConnectionFeature>()!;
                return $"{connection.RemoteIpAddress}:{connection.RemotePort} {context.Connection.RemoteIpAddress}";
            }),
            builder => builder.WebHost.UseFalconet(options =>
                options.Endpoints.Add(new ProxyProtocolEndPoint(new IPEndPoint(IPAddress.Loopback, 0)))),
            args: []);

        using RawClient client = RawClient.Connect(host.EndPoint, preamble: "PROXY TCP4 198.51.100.23 10.0.0.1 40404 80\r\n"u8.ToArray());
        await client.SendAsync("GET /who HTTP/1.1\r\nHost: x\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("198.51.100.23:40404 198.51.100.23");
    }
}

public sealed class DeploymentTestsOnLibuv : DeploymentTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

public sealed class DeploymentTestsOnIoUring : DeploymentTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
