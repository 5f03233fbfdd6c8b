using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Server;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Falconet.AspNetCore;

/// <summary>The ASP.NET Core server (<see cref="IServer"/>) that runs the application on a <see cref="FalconetServer"/>.</summary>
public sealed class FalconetWebServer : IServer
{
    /// <summary>Where a server without any configured address listens, as Kestrel does.</summary>
    public const string DefaultAddress = "http://localhost:5000";

    private static readonly TimeSpan s_falconetDefaultShutdownTimeout = new FalconetServerOptions().ShutdownTimeout;

    private readonly FalconetServerOptions _options;
    private readonly ILoggerFactory _loggerFactory;
    private readonly ILogger _logger;
    private readonly TimeSpan? _hostShutdownTimeout;
    private readonly ServerAddressesFeature _addresses = new();
    private FalconetServer? _server;

    /// <summary>Created by the host's service provider (see <see cref="WebHostBuilderFalconetExtensions.UseFalconet(Microsoft.AspNetCore.Hosting.IWebHostBuilder)"/>).</summary>
    public FalconetWebServer(IOptions<FalconetServerOptions> options, ILoggerFactory loggerFactory, IOptions<HostOptions>? hostOptions = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(loggerFactory);
        _options = options.Value;
        _loggerFactory = loggerFactory;
        _logger = loggerFactory.CreateLogger("Falconet.AspNetCore");
        _hostShutdownTimeout = hostOptions?.Value.ShutdownTimeout;
        Features.Set<IServerAddressesFeature>(_addresses);
    }

    /// <inheritdoc/>
    public IFeatureCollection Features { get; } = new FeatureCollection();

    /// <summary>The Falconet server once started (diagnostics and tests).</summary>
    public FalconetServer? Server => _server;

    /// <inheritdoc/>
    public async Task StartAsync<TContext>(Microsoft.AspNetCore.Hosting.Server.IHttpApplication<TContext> application, CancellationToken cancellationToken)
        where TContext : notnull
    {
        ArgumentNullException.ThrowIfNull(application);
        if (_server is not null)
        {
            throw new InvalidOperationException("The server has already been started.");
        }

        FalconetServerOptions options = PrepareOptions();
        var settings = new FalconetWebServerSettings(_loggerFactory.CreateLogger("Falconet.AspNetCore"),
            options.Limits.MaxRequestBodySize, options.AllowSynchronousWrites);
        var server = new FalconetServer(options, new AspNetHttpApplication<TContext>(application, settings));
        await server.StartAsync(cancellationToken).ConfigureAwait(false);
        _server = server;

        _addresses.Addresses.Clear();
        foreach (IPEndPoint endpoint in server.BoundEndpoints)
        {
            string address = endpoint.AddressFamily == AddressFamily.InterNetworkV6
                ? string.Create(CultureInfo.InvariantCulture, $"http://[{endpoint.Address}]:{endpoint.Port}")
                : string.Create(CultureInfo.InvariantCulture, $"http://{endpoint.Address}:{endpoint.Port}");
            _addresses.Addresses.Add(address);
            AspNetCoreLog.ListeningOn(_logger, address);
        }
    }

    /// <summary>
    /// Stops gracefully (see <see cref="FalconetServer.StopAsync"/>): in-flight requests finish until the host's shutdown
    /// timeout fires <paramref name="cancellationToken"/>, then what is left is aborted.
    /// </summary>
    public Task StopAsync(CancellationToken cancellationToken) => _server?.StopAsync(cancellationToken) ?? Task.CompletedTask;

    /// <inheritdoc/>
    public void Dispose() => _server?.DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <summary>A copy of the options with the endpoints from the addresses, the host's logging and shutdown timeout.</summary>
    private FalconetServerOptions PrepareOptions()
    {
        var options = new FalconetServerOptions
        {
            Transport = _options.Transport,
            TransportFactory = _options.TransportFactory,
            Limits = _options.Limits,
            OutputBufferLimit = _options.OutputBufferLimit,
            MaxRequestBodyDrainSize = _options.MaxRequestBodyDrainSize,
            AllowSynchronousWrites = _options.AllowSynchronousWrites,
            Scheduling = _options.Scheduling,
            IoThreadCount = _options.IoThreadCount,
            KeepAliveTimeout = _options.KeepAliveTimeout,
            RequestHeadersTimeout = _options.RequestHeadersTimeout,
            TrackPoolLeaks = _options.TrackPoolLeaks,
            DrainDelay = _options.DrainDelay,
            DrainIdleTimeout = _options.DrainIdleTimeout,
            Draining = _options.Draining,
            ReusePort = _options.ReusePort,
            UnixSocketPermissions = _options.UnixSocketPermissions,
            LoggerFactory = _options.LoggerFactory ?? _loggerFactory,

            // Unless set explicitly, the host's shutdown timeout (HostOptions.ShutdownTimeout) decides how long requests may finish.
            ShutdownTimeout = _options.ShutdownTimeout == s_falconetDefaultShutdownTimeout && _hostShutdownTimeout is { } host
                ? host
                : _options.ShutdownTimeout,
        };

        ICollection<string> addresses = _addresses.Addresses;
        if (_options.Endpoints.Count != 0 && !(_addresses.PreferHostingUrls && addresses.Count != 0))
        {
            if (addresses.Count != 0)
            {
                AspNetCoreLog.OverridingAddresses(_logger, string.Join(", ", addresses));
            }

            foreach (EndPoint endpoint in _options.Endpoints)
            {
                options.Endpoints.Add(endpoint);
            }

            return options;
        }

        if (addresses.Count == 0)
        {
            AspNetCoreLog.UsingDefaultAddress(_logger, DefaultAddress);
            addresses.Add(DefaultAddress);
        }

        foreach (string address in addresses)
        {
            foreach (IPEndPoint endpoint in ServerAddresses.Parse(address))
            {
                options.Endpoints.Add(endpoint);
            }
        }

        return options;
    }
}

/// <summary>Turns ASP.NET Core address strings (--urls, ASPNETCORE_URLS, ASPNETCORE_HTTP_PORTS) into endpoints to bind.</summary>
internal static class ServerAddresses
{
    /// <summary>
    /// "http://localhost:5000" gives the IPv4 and IPv6 loopbacks; "http://*:80", "http://+:80" and "http://0.0.0.0:80" every
    /// address (IPv6 any in dual mode where the system has IPv6); an IP address itself; port 0 a free port.
    /// </summary>
    /// <exception cref="InvalidOperationException">The address is https (Falconet has no TLS yet), a Unix socket, has a path base or names a host.</exception>
    public static IEnumerable<IPEndPoint> Parse(string address)
    {
        BindingAddress parsed;
        try
        {
            parsed = BindingAddress.Parse(address);
        }
        catch (FormatException exception)
        {
            throw new InvalidOperationException($"Invalid address '{address}': {exception.Message}", exception);
        }

        if (!string.Equals(parsed.Scheme, "http", StringComparison.OrdinalIgnoreCase))
        {
            throw new InvalidOperationException($"Falconet serves only http:// addresses; '{address}' cannot be bound (no TLS).");
        }

        if (parsed.IsUnixPipe || parsed.IsNamedPipe)
        {
            throw new InvalidOperationException($"Falconet listens on TCP only; '{address}' cannot be bound.");
        }

        if (!string.IsNullOrEmpty(parsed.PathBase))
        {
            throw new InvalidOperationException($"A path base in an address is not supported ('{address}'); use UsePathBase in the application.");
        }

        int port = parsed.Port;
        string host = parsed.Host;
        if (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase))
        {
            yield return new IPEndPoint(IPAddress.Loopback, port);
            if (Socket.OSSupportsIPv6 && port != 0)
            {
                yield return new IPEndPoint(IPAddress.IPv6Loopback, port);
            }

            yield break;
        }

        if (host is "*" or "+" or "" || (IPAddress.TryParse(host, out IPAddress? any) && any.Equals(IPAddress.Any)))
        {
            yield return new IPEndPoint(Socket.OSSupportsIPv6 ? IPAddress.IPv6Any : IPAddress.Any, port);
            yield break;
        }

        if (IPAddress.TryParse(host.Trim('[', ']'), out IPAddress? ip))
        {
            yield return new IPEndPoint(ip, port);
            yield break;
        }

        throw new InvalidOperationException($"Falconet binds IP addresses, 'localhost' or a wildcard; '{address}' names a host ({host}).");
    }
}
