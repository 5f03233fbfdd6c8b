using System;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Http;
using Falconet.Server;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Falconet.Hosting;

/// <summary>The hosted service that starts a <see cref="FalconetServer"/> with the host and stops it gracefully with it.</summary>
public sealed class FalconetHostedService : IHostedService, IAsyncDisposable
{
    private static readonly TimeSpan s_defaultShutdownTimeout = new FalconetServerOptions().ShutdownTimeout;

    private readonly FalconetServerOptions _options;
    private readonly IHttpApplication _application;
    private readonly ILoggerFactory _loggerFactory;
    private readonly TimeSpan? _hostShutdownTimeout;
    private readonly TlsServerOptions _httpsDefaults;

    /// <summary>Created by the container (see <see cref="FalconetServiceCollectionExtensions"/>).</summary>
    public FalconetHostedService(IOptions<FalconetServerOptions> options, IHttpApplication application, ILoggerFactory loggerFactory,
        IOptions<HostOptions>? hostOptions = null, IOptionsMonitor<TlsServerOptions>? httpsDefaults = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        _options = options.Value;
        _application = application;
        _loggerFactory = loggerFactory;
        _hostShutdownTimeout = hostOptions?.Value.ShutdownTimeout;
        _httpsDefaults = httpsDefaults?.Get(FalconetHttpsDefaults.OptionsName) ?? new TlsServerOptions();
    }

    /// <summary>The running server (null before the host started it).</summary>
    public FalconetServer? Server { get; private set; }

    /// <inheritdoc/>
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        // Logging goes through the host's logger factory unless the options name another; unless set explicitly, what the
        // host's shutdown timeout leaves after the drain delay decides how long in-flight requests may finish (the options
        // validator refused a drain delay that leaves nothing).
        _options.LoggerFactory ??= _loggerFactory;
        if (AdoptsHostShutdownTimeout(_options, _hostShutdownTimeout) && _hostShutdownTimeout - _options.DrainDelay is { } left && left > TimeSpan.Zero)
        {
            _options.ShutdownTimeout = left;
        }

        FalconetHttpsDefaults.CompleteCertificates(_options, _httpsDefaults, _loggerFactory.CreateLogger("Falconet.Hosting"));
        var server = new FalconetServer(_options, _application);
        Server = server;
        await server.StartAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// True when the server's shutdown timeout is left at its default and the host has a finite one: the server then takes what
    /// the host's leaves after <see cref="FalconetServerOptions.DrainDelay"/>.
    /// </summary>
    internal static bool AdoptsHostShutdownTimeout(FalconetServerOptions options, TimeSpan? hostShutdownTimeout)
        => options.ShutdownTimeout == s_defaultShutdownTimeout && hostShutdownTimeout is { } host && host != Timeout.InfiniteTimeSpan;

    /// <inheritdoc/>
    public Task StopAsync(CancellationToken cancellationToken) => Server?.StopAsync(cancellationToken) ?? Task.CompletedTask;

    /// <inheritdoc/>
    public ValueTask DisposeAsync() => Server?.DisposeAsync() ?? default;
}
