using System;
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
            services.AddOptions<FalconetServerOptions>();
            services.AddSingleton<IServer, FalconetWebServer>();
        });
    }

    /// <summary>Makes Falconet the application's server and configures it.</summary>
    public static IWebHostBuilder UseFalconet(this IWebHostBuilder builder, Action<FalconetServerOptions> configure)
        => builder.UseFalconet().ConfigureFalconet(configure);

    /// <summary>Configures the Falconet server (endpoints, limits, timeouts, transport); call it any number of times.</summary>
    public static IWebHostBuilder ConfigureFalconet(this IWebHostBuilder builder, Action<FalconetServerOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentNullException.ThrowIfNull(configure);
        return builder.ConfigureServices(services => services.Configure(configure));
    }
}
