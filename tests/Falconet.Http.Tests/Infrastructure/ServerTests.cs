using System;
using System.Net;
using System.Text;
using Shouldly;
using System.Threading.Tasks;
using Falconet.Server;
using Falconet.Transport.Libuv;
using Falconet.Transport.Sockets;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>
/// Base of the end-to-end test classes: each runs on the sockets transport, and again on libuv through a derived
/// class (<c>…OnLibuv</c>) that only overrides <see cref="Transport"/>.
/// </summary>
public abstract class ServerTests
{
    /// <summary>The transport every server of the class runs on.</summary>
    protected virtual TransportKind Transport => TransportKind.Sockets;

    /// <summary>True for the classes that run the suite over TLS (<c>…OverTls</c>): the server listens on HTTPS only.</summary>
    protected virtual bool Https => false;

    /// <summary>Starts a <see cref="TestServer"/> on <see cref="Transport"/>; <paramref name="configure"/> runs after the transport is set.</summary>
    internal Task<TestServer> StartServerAsync(Func<HttpContext, ValueTask> handler, Action<FalconetServerOptions>? configure = null, bool trackLeaks = true)
        => StartServerAsync(options => new FalconetServer(options, handler), configure, trackLeaks);

    /// <summary>Starts a server of an app's own header set (<see cref="FalconetServer{THeaderSet}"/>) on <see cref="Transport"/>.</summary>
    internal Task<TestServer> StartServerAsync<THeaderSet>(Func<HttpContext<THeaderSet>, ValueTask> handler, Action<FalconetServerOptions>? configure = null, bool trackLeaks = true)
        where THeaderSet : struct, IHeaderSet
        => StartServerAsync(options => new FalconetServer<THeaderSet>(options, handler), configure, trackLeaks);

    private async Task<TestServer> StartServerAsync(Func<FalconetServerOptions, FalconetServer> create, Action<FalconetServerOptions>? configure, bool trackLeaks)
    {
        TestServer host = await TestServer.StartAsync(create, options =>
        {
            options.Transport = Transport;
            if (Https)
            {
                options.Endpoints.Clear();
                options.HttpsEndpoints.Add(new HttpsEndpoint(new IPEndPoint(IPAddress.Loopback, 0), TestCertificates.Server));
            }

            configure?.Invoke(options);
        }, trackLeaks);

        // The class runs where it says, unless a test brought its own transport.
        if (host.Server.Options.TransportFactory is null)
        {
            host.Server.Transport.ShouldBeOfType(Transport == TransportKind.Libuv ? typeof(LibuvTransportFactory) : typeof(SocketTransportFactory));
        }

        return host;
    }

    /// <summary>Sends <paramref name="request"/> and checks the answer: the status, Content-Length 0, Connection: close, then the close; the handler never runs.</summary>
    internal Task AssertRejectedAsync(string request, int status, Action<Falconet.Server.FalconetServerOptions>? configure = null)
        => AssertRejectedAsync(Encoding.Latin1.GetBytes(request), status, configure);

    /// <summary>Sends raw bytes and checks they are rejected like <see cref="AssertRejectedAsync(string, int, Action{Falconet.Server.FalconetServerOptions}?)"/>.</summary>
    internal async Task AssertRejectedAsync(byte[] request, int status, Action<Falconet.Server.FalconetServerOptions>? configure = null)
    {
        bool called = false;
        await using TestServer host = await StartServerAsync(
            context =>
            {
                called = true;
                return default;
            },
            configure);
        using RawClient client = host.Connect();
        await client.SendAsync(request);
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(status);
        response.Header("Connection").ShouldBe("close");
        response.Header("Content-Length").ShouldBe("0");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
        called.ShouldBeFalse();
    }
}
