using System;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Falconet.AspNetCore.Tests.Infrastructure;

/// <summary>The server an ASP.NET Core test runs on: Kestrel as the reference, or Falconet on one of its transports.</summary>
public enum WebServer
{
    Kestrel,
    FalconetSockets,
    FalconetLibuv,
}

/// <summary>
/// An ASP.NET Core application for one test, on 127.0.0.1 port 0, on Falconet (a given transport) or Kestrel: endpoints
/// mapped by the test, logs captured. Disposing it stops the host and, on Falconet, checks that every pool block came back.
/// </summary>
internal sealed class AspNetTestApp : IAsyncDisposable
{
    private AspNetTestApp(WebApplication app, CapturingLoggerProvider logs, WebServer kind)
    {
        App = app;
        Logs = logs;
        Kind = kind;
        WebServer = app.Services.GetRequiredService<IServer>();
        string address = WebServer.Features.Get<IServerAddressesFeature>()!.Addresses.First();
        var handler = new SocketsHttpHandler { SslOptions = TestCertificates.ClientOptions() };
        int unix = address.IndexOf("://unix:", StringComparison.Ordinal);
        if (unix >= 0)
        {
            // A Unix domain socket: the client connects to the socket's file whatever host the URL names.
            UnixSocketPath = address[(unix + "://unix:".Length)..];
            BaseAddress = new Uri(address[..unix] + "://localhost/");
            handler.ConnectCallback = ConnectUnixAsync;
        }
        else
        {
            BaseAddress = new Uri(address + "/");
            _endPoint = new IPEndPoint(IPAddress.Parse(BaseAddress.Host.Trim('[', ']')), BaseAddress.Port);
        }

        Http = new HttpClient(handler) { BaseAddress = BaseAddress, Timeout = TestTimeouts.Operation };
    }

    private readonly IPEndPoint? _endPoint;

    public WebApplication App { get; }

    public WebServer Kind { get; }

    public IServer WebServer { get; }

    /// <summary>The Falconet server (a test that runs only on Falconet).</summary>
    public FalconetWebServer Server => WebServer as FalconetWebServer ?? throw new InvalidOperationException("This test app runs on Kestrel.");

    public CapturingLoggerProvider Logs { get; }

    /// <summary>The first address the server reports (http or https).</summary>
    public Uri BaseAddress { get; }

    /// <summary>The TCP endpoint of <see cref="BaseAddress"/>.</summary>
    public IPEndPoint EndPoint => _endPoint ?? throw new InvalidOperationException("The first address is a Unix domain socket: " + UnixSocketPath);

    /// <summary>The path of the Unix domain socket when the first address is one ("http://unix:/path"); <see cref="Http"/> connects to it.</summary>
    public string? UnixSocketPath { get; }

    /// <summary>A connection to the Unix domain socket at <paramref name="path"/>, for <see cref="SocketsHttpHandler.ConnectCallback"/>.</summary>
    public static async ValueTask<Stream> ConnectUnixAsync(string path, CancellationToken cancellationToken)
    {
        var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            await socket.ConnectAsync(new UnixDomainSocketEndPoint(path), cancellationToken);
            return new NetworkStream(socket, ownsSocket: true);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private ValueTask<Stream> ConnectUnixAsync(SocketsHttpConnectionContext context, CancellationToken cancellationToken)
        => ConnectUnixAsync(UnixSocketPath!, cancellationToken);

    /// <summary>A client of <see cref="BaseAddress"/> that trusts the test certificate.</summary>
    public HttpClient Http { get; }

    /// <summary>The section the server reads its configuration from: "Kestrel" or "Falconet" (the same schema).</summary>
    public static string ConfigurationSection(WebServer server) => server == Infrastructure.WebServer.Kestrel ? "Kestrel" : "Falconet";

    /// <summary>Every address the server reports, as URIs.</summary>
    public Uri[] Addresses => WebServer.Features.Get<IServerAddressesFeature>()!.Addresses.Select(a => new Uri(a + "/")).ToArray();

    /// <summary>The first reported address of <paramref name="scheme"/> ("http" or "https").</summary>
    public Uri Address(string scheme) => Addresses.First(a => a.Scheme == scheme);

    /// <summary>The endpoint of <see cref="Address"/>.</summary>
    public IPEndPoint EndPointOf(string scheme)
    {
        Uri address = Address(scheme);
        return new IPEndPoint(IPAddress.Parse(address.Host.Trim('[', ']')), address.Port);
    }

    public static Task<AspNetTestApp> StartAsync(TransportKind transport, Action<WebApplication> map,
        Action<WebApplicationBuilder>? configure = null, string[]? args = null)
        => StartAsync(transport == TransportKind.Libuv ? Infrastructure.WebServer.FalconetLibuv : Infrastructure.WebServer.FalconetSockets,
            map, configure, args);

    public static async Task<AspNetTestApp> StartAsync(WebServer server, Action<WebApplication> map,
        Action<WebApplicationBuilder>? configure = null, string[]? args = null)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(args ?? ["--urls", "http://127.0.0.1:0"]);
        var logs = new CapturingLoggerProvider();
        builder.Logging.ClearProviders().AddProvider(logs).SetMinimumLevel(LogLevel.Debug);
        if (server == Infrastructure.WebServer.Kestrel)
        {
            builder.WebHost.UseKestrel();
        }
        else
        {
            builder.WebHost.UseFalconet(options =>
            {
                options.Transport = server == Infrastructure.WebServer.FalconetLibuv ? TransportKind.Libuv : TransportKind.Sockets;
                options.IoThreadCount = 2;
                options.TrackPoolLeaks = true;
            });
        }

        configure?.Invoke(builder);
        WebApplication app = builder.Build();
        map(app);
        await app.StartAsync().WaitAsync(TestTimeouts.Operation);
        return new AspNetTestApp(app, logs, server);
    }

    /// <summary>Makes the test certificate the HTTPS default of <paramref name="server"/> (for https addresses), through each server's own API.</summary>
    public static void UseTestCertificate(WebApplicationBuilder builder, WebServer server)
    {
        if (server == Infrastructure.WebServer.Kestrel)
        {
            builder.WebHost.ConfigureKestrel(kestrel => kestrel.ConfigureHttpsDefaults(https => https.ServerCertificate = TestCertificates.Server));
        }
        else
        {
            builder.WebHost.ConfigureFalconetHttpsDefaults(tls => tls.ServerCertificate = TestCertificates.Server);
        }
    }

    public RawClient Connect() => RawClient.Connect(EndPoint);

    public async ValueTask DisposeAsync()
    {
        Http.Dispose();
        await App.StopAsync().WaitAsync(TestTimeouts.Operation);
        if (WebServer is FalconetWebServer falconet)
        {
            await falconet.Server!.WaitForAllBlocksReturnedAsync(TimeSpan.FromSeconds(5));
        }

        await App.DisposeAsync();
    }
}
