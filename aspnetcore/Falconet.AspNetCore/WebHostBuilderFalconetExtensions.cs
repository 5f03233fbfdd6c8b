using System;
using Falconet.Hosting;
using Falconet.Server;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.Extensions.DependencyInjection;

namespace Falconet.AspNetCore;

/// <summary>Runs an ASP.NET Core application on Falconet: <c>builder.WebHost.UseFalconet()</c>.</summary>
public static class WebHostBuilderFalconetExtensions
{
    /// <summary>Makes Falconet the application's server (replacing Kestrel).</summary>
    public static IWebHostBuilder UseFalconet(this IWebHostBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        return builder.ConfigureServices(services =>
        {
            // The "Falconet" section of the host's configuration: options, limits, endpoints and certificates, as the generic
            // host reads it (a "Kestrel" section moves over with a rename).
            services.AddFalconetConfiguration();
            services.AddSingleton<IServer, FalconetWebServer>();
        });
    }

    /// <summary>
    /// Configures the HTTPS defaults: the TLS settings of https addresses (--urls, ASPNETCORE_URLS), and the certificate of any
    /// HTTPS endpoint configured without one (as Kestrel's ConfigureHttpsDefaults). Call it any number of times.
    /// </summary>
    public static IWebHostBuilder ConfigureFalconetHttpsDefaults(this IWebHostBuilder builder, Action<TlsServerOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentNullException.ThrowIfNull(configure);
        return builder.ConfigureServices(services => services.ConfigureFalconetHttpsDefaults(configure));
    }

    /// <summary>Makes Falconet the application's server and configures it.</summary>
    public static IWebHostBuilder UseFalconet(this IWebHostBuilder builder, Action<FalconetServerOptions> configure)
        => builder.UseFalconet().ConfigureFalconet(configure);

    /// <summary>Configures the Falconet server (endpoints, HTTPS endpoints, limits, timeouts, transport) after the configuration section; call it any number of times.</summary>
    public static IWebHostBuilder ConfigureFalconet(this IWebHostBuilder builder, Action<FalconetServerOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentNullException.ThrowIfNull(configure);
        return builder.ConfigureServices(services => services.Configure(configure));
    }
}
