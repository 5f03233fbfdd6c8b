using System;
using System.Collections.Generic;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Hosting;
using Falconet.Server;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
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

    private readonly FalconetServerOptions _options;
    private readonly TlsServerOptions _httpsDefaults;
    private readonly ILoggerFactory _loggerFactory;
    private readonly ILogger _logger;
    private readonly TimeSpan? _hostShutdownTimeout;
    private readonly CancellationToken _stopping;
    private readonly ServerAddressesFeature _addresses = new();
    private FalconetServer? _server;

    /// <summary>Created by the host's service provider (see <see cref="WebHostBuilderFalconetExtensions.UseFalconet(Microsoft.AspNetCore.Hosting.IWebHostBuilder)"/>).</summary>
    public FalconetWebServer(IOptions<FalconetServerOptions> options, ILoggerFactory loggerFactory, IOptions<HostOptions>? hostOptions = null,
        IOptionsMonitor<TlsServerOptions>? httpsDefaults = null, IHostApplicationLifetime? lifetime = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(loggerFactory);
        _stopping = lifetime?.ApplicationStopping ?? default;
        _options = options.Value;
        _httpsDefaults = httpsDefaults?.Get(FalconetHttpsDefaults.OptionsName) ?? new TlsServerOptions();
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
        var settings = new FalconetWebServerSettings(_logger, options.Limits.MaxRequestBodySize, options.AllowSynchronousWrites, _stopping);
        var server = new FalconetServer(options, new AspNetHttpApplication<TContext>(application, settings));
        await server.StartAsync(cancellationToken).ConfigureAwait(false);
        _server = server;

        _addresses.Addresses.Clear();
        foreach (string address in server.ListeningUrls)
        {
            AddAddress(address);
        }
    }

    /// <summary>
    /// Stops gracefully (see <see cref="FalconetServer.StopAsync"/>): in-flight requests finish until the host's shutdown
    /// timeout fires <paramref name="cancellationToken"/>, then what is left is aborted.
    /// </summary>
    public Task StopAsync(CancellationToken cancellationToken) => _server?.StopAsync(cancellationToken) ?? Task.CompletedTask;

    /// <inheritdoc/>
    public void Dispose() => _server?.DisposeAsync().AsTask().GetAwaiter().GetResult();

    private void AddAddress(string address)
    {
        _addresses.Addresses.Add(address);
        AspNetCoreLog.ListeningOn(_logger, address);
    }

    /// <summary>
    /// A copy of the options with the endpoints to bind, the host's logging and shutdown timeout. The endpoints are those of
    /// the options (code and the "Falconet" configuration section) when there are any, as on Kestrel, unless
    /// <see cref="IServerAddressesFeature.PreferHostingUrls"/> lets the host's addresses win; otherwise the addresses
    /// (--urls, ASPNETCORE_URLS, or the default). An https address takes the HTTPS defaults; every HTTPS endpoint without a
    /// certificate gets the default one, or the development certificate.
    /// </summary>
    private FalconetServerOptions PrepareOptions()
    {
        FalconetServerOptions options = _options.Copy();
        options.LoggerFactory ??= _loggerFactory;

        // Unless set explicitly, what the host's shutdown timeout (HostOptions.ShutdownTimeout) leaves after the drain delay
        // decides how long requests may finish, as under the generic host.
        if (FalconetHostedService.AdoptsHostShutdownTimeout(options, _hostShutdownTimeout)
            && _hostShutdownTimeout - options.DrainDelay is { } left && left > TimeSpan.Zero)
        {
            options.ShutdownTimeout = left;
        }

        ICollection<string> addresses = _addresses.Addresses;
        bool configured = options.Endpoints.Count != 0 || options.HttpsEndpoints.Count != 0;
        if (configured && !(_addresses.PreferHostingUrls && addresses.Count != 0))
        {
            if (addresses.Count != 0)
            {
                AspNetCoreLog.OverridingAddresses(_logger, string.Join(", ", addresses));
            }
        }
        else
        {
            options.Endpoints.Clear();
            options.HttpsEndpoints.Clear();
            if (addresses.Count == 0)
            {
                AspNetCoreLog.UsingDefaultAddress(_logger, DefaultAddress);
                addresses.Add(DefaultAddress);
            }

            foreach (string address in addresses)
            {
                AddAddressEndpoints(options, address);
            }
        }

        FalconetHttpsDefaults.CompleteCertificates(options, _httpsDefaults, _logger);
        return options;
    }

    private void AddAddressEndpoints(FalconetServerOptions options, string text)
    {
        ListenAddress address;
        try
        {
            address = ListenAddress.Parse(text);
        }
        catch (FormatException exception)
        {
            throw new InvalidOperationException($"Falconet cannot bind the address {exception.Message}", exception);
        }

        foreach (EndPoint endpoint in address.EndPoints)
        {
            if (address.IsHttps)
            {
                // Each address its own copy: the certificate filled in later belongs to it alone.
                options.HttpsEndpoints.Add(new HttpsEndpoint(endpoint, _httpsDefaults.Copy()));
            }
            else
            {
                options.Endpoints.Add(endpoint);
            }
        }
    }
}
