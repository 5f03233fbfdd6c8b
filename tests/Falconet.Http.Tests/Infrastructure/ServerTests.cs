using System;
using System.Net;
using System.Text;
using System.Threading.Tasks;
using Falconet.Server;
using Falconet.Transport.IoUring;
using Falconet.Transport.Libuv;
using Falconet.Transport.Sockets;
using Shouldly;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>
/// Base of the end-to-end test classes: each runs on the sockets transport, and again on libuv and on io_uring through
/// derived classes (<c>…OnLibuv</c>, <c>…OnIoUring</c>) that only override <see cref="Transport"/>.
/// </summary>
public abstract class ServerTests
{
    /// <summary>The transport every server of the class runs on.</summary>
    protected virtual TransportKind Transport => TransportKind.Sockets;

    /// <summary>True for the classes that run the suite over TLS (<c>…OverTls</c>): the server listens on HTTPS only.</summary>
    protected virtual bool Https => false;

    /// <summary>
    /// The TLS engine of every HTTPS endpoint of the class's servers: SslStream, named, unless the class chooses another (the
    /// <c>…OnOpenSsl</c> classes OpenSSL, <c>TlsAutoEngineTests</c> Auto).
    /// </summary>
    protected virtual TlsEngine TlsEngine => TlsEngine.SslStream;

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

            // Named on every endpoint: the options' default (Auto) would run OpenSSL here, and the suites mean SslStream.
            foreach (HttpsEndpoint endpoint in options.HttpsEndpoints)
            {
                endpoint.Tls.Engine = TlsEngine;
            }
        }, trackLeaks);

        // The class runs where it says, unless a test brought its own transport.
        if (host.Server.Options.TransportFactory is null)
        {
            host.Server.Transport.ShouldBeOfType(Transport switch
            {
                TransportKind.Libuv => typeof(LibuvTransportFactory),
                TransportKind.IoUring => typeof(IoUringTransportFactory),
                _ => typeof(SocketTransportFactory),
            });
        }

        return host;
    }

    /// <summary>
    /// Sends <paramref name="request"/> and checks the refusal: the status of <paramref name="reason"/>, Content-Length 0,
    /// Connection: close, then the close; the handler never runs, and the server logged the request as bad for that reason.
    /// </summary>
    internal Task AssertRejectedAsync(string request, RequestRejectionReason reason, Action<Falconet.Server.FalconetServerOptions>? configure = null)
        => AssertRejectedAsync(Encoding.Latin1.GetBytes(request), reason, configure);

    /// <summary>Sends raw bytes and checks they are refused like <see cref="AssertRejectedAsync(string, RequestRejectionReason, Action{Falconet.Server.FalconetServerOptions}?)"/>.</summary>
    internal Task AssertRejectedAsync(byte[] request, RequestRejectionReason reason, Action<Falconet.Server.FalconetServerOptions>? configure = null)
        => AssertRefusedAsync(request, reason, handlerReadsBody: false, configure);

    /// <summary>
    /// Checks a refusal found in the body: the handler reads the body, the read fails, and the server answers the status of
    /// <paramref name="reason"/> and closes, as for <see cref="AssertRejectedAsync(string, RequestRejectionReason, Action{Falconet.Server.FalconetServerOptions}?)"/>.
    /// </summary>
    internal Task AssertBodyRejectedAsync(string request, RequestRejectionReason reason)
        => AssertRefusedAsync(Encoding.Latin1.GetBytes(request), reason, handlerReadsBody: true, configure: null);

    private async Task AssertRefusedAsync(byte[] request, RequestRejectionReason reason, bool handlerReadsBody, Action<Falconet.Server.FalconetServerOptions>? configure)
    {
        bool called = false;
        var logs = new RecordingLoggerFactory();
        await using TestServer host = await StartServerAsync(
            async context =>
            {
                called = true;
                byte[] buffer = new byte[256];
                while (handlerReadsBody && await context.Request.BodyReader.ReadAsync(buffer) > 0)
                {
                }
            },
            options =>
            {
                options.LoggerFactory = logs;
                configure?.Invoke(options);
            });
        using RawClient client = host.Connect();
        await client.SendAsync(request);
        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(RequestRejections.GetStatusCode(reason));
        response.Header("Connection").ShouldBe("close");
        response.Header("Content-Length").ShouldBe("0");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
        called.ShouldBe(handlerReadsBody);
        logs.Entries.ShouldContain(entry => entry.EventId == RecordingLoggerFactory.BadRequest
            && entry.Message.Contains($"({RequestRejections.GetName(reason)})", StringComparison.Ordinal));
    }
}
