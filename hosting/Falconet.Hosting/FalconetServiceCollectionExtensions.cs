using System;
using System.Threading.Tasks;
using Falconet.Http;
using Falconet.Server;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;

namespace Falconet.Hosting;

/// <summary>Registers a Falconet server on the generic host: <c>builder.Services.AddFalconet&lt;MyApplication&gt;()</c>.</summary>
public static class FalconetServiceCollectionExtensions
{
    /// <summary>The configuration section the server's options are read from.</summary>
    public const string ConfigurationSection = "Falconet";

    /// <summary>
    /// Runs <typeparamref name="TApplication"/> (a singleton from the container) on a Falconet server that starts and stops
    /// with the host. Options come from the configuration section <see cref="ConfigurationSection"/>, then
    /// <paramref name="configure"/>; they are validated when the host starts.
    /// </summary>
    public static IServiceCollection AddFalconet<TApplication>(this IServiceCollection services, Action<FalconetServerOptions>? configure = null)
        where TApplication : class, IHttpApplication
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddSingleton<IHttpApplication, TApplication>();
        return services.AddFalconetServer(configure);
    }

    /// <summary>Runs <paramref name="handler"/> for every request on a Falconet server hosted like <see cref="AddFalconet{TApplication}"/>.</summary>
    public static IServiceCollection AddFalconet(this IServiceCollection services, Func<HttpContext, ValueTask> handler,
        Action<FalconetServerOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(handler);
        services.AddSingleton<IHttpApplication>(new DelegateHttpApplication(handler));
        return services.AddFalconetServer(configure);
    }

    /// <summary>
    /// Configures the HTTPS defaults (<see cref="FalconetHttpsDefaults"/>): the TLS settings of https addresses given without
    /// their own, and the certificate of any HTTPS endpoint configured without one. Runs after the configuration's
    /// "Certificates:Default" and "EndpointDefaults"; call it any number of times.
    /// </summary>
    public static IServiceCollection ConfigureFalconetHttpsDefaults(this IServiceCollection services, Action<TlsServerOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(configure);
        return services.Configure(FalconetHttpsDefaults.OptionsName, configure);
    }

    /// <summary>
    /// Binds the configuration section <see cref="ConfigurationSection"/> to <see cref="FalconetServerOptions"/> (options,
    /// limits, endpoints) and to the HTTPS defaults (<see cref="FalconetHttpsDefaults"/>); both are validated when the host
    /// starts. ASP.NET Core's <c>UseFalconet</c> calls it too.
    /// </summary>
    public static OptionsBuilder<FalconetServerOptions> AddFalconetConfiguration(this IServiceCollection services)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddOptions<TlsServerOptions>(FalconetHttpsDefaults.OptionsName)
            .Configure<IConfiguration>((defaults, configuration) =>
                FalconetConfiguration.BindHttpsDefaults(configuration.GetSection(ConfigurationSection), defaults));
        return services.AddOptions<FalconetServerOptions>()
            .Configure<IConfiguration>((options, configuration) =>
                FalconetConfiguration.Bind(configuration.GetSection(ConfigurationSection), options));
    }

    private static IServiceCollection AddFalconetServer(this IServiceCollection services, Action<FalconetServerOptions>? configure)
    {
        OptionsBuilder<FalconetServerOptions> options = services.AddFalconetConfiguration();
        if (configure is not null)
        {
            options.Configure(configure);
        }

        services.AddSingleton<IValidateOptions<FalconetServerOptions>, FalconetOptionsValidator>();
        options.ValidateOnStart();
        services.AddSingleton<FalconetHostedService>();
        services.AddHostedService(provider => provider.GetRequiredService<FalconetHostedService>());
        return services;
    }
}
