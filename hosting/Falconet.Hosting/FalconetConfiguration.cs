using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Reflection;
using Falconet.Server;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;

namespace Falconet.Hosting;

/// <summary>
/// Reads <see cref="FalconetServerOptions"/> from a configuration section (appsettings.json "Falconet", environment variables
/// Falconet__KeepAliveTimeout, ...). Endpoints and certificates follow the schema of Kestrel's section ("Endpoints",
/// "Certificates", "EndpointDefaults"), so an appsettings.json moves over by renaming "Kestrel" to "Falconet". Every key must
/// name an option: a typo fails the start with its path.
/// </summary>
/// <remarks>
/// <code>
/// "Falconet": {
///   "Endpoints": {
///     "Http": { "Url": "http://*:8080" },
///     "Https": { "Url": "https://*:8443", "Certificate": { "Path": "cert.pem", "KeyPath": "key.pem" } }
///   },
///   "Certificates": { "Default": { "Path": "site.pfx", "Password": "..." } },
///   "Transport": "Sockets",
///   "KeepAliveTimeout": "00:02:10",
///   "Limits": { "MaxRequestBodySize": 1048576 }
/// }
/// </code>
/// "Endpoints" may also be a list of addresses: <c>[ "http://127.0.0.1:8080", "[::]:8081" ]</c>.
/// </remarks>
public static partial class FalconetConfiguration
{
    // What configuration can set: the public settable options of simple types, Limits, and the endpoint sections.
    private static readonly string[] s_ignored = [nameof(FalconetServerOptions.TransportFactory), nameof(FalconetServerOptions.LoggerFactory)];

    // Kestrel's names of the options Falconet has under another name or place, so Kestrel's keys move over as they are.
    private static readonly Dictionary<string, string> s_kestrelNames = new(StringComparer.OrdinalIgnoreCase)
    {
        ["AllowSynchronousIO"] = nameof(FalconetServerOptions.AllowSynchronousWrites),
        ["Limits:KeepAliveTimeout"] = nameof(FalconetServerOptions.KeepAliveTimeout),
        ["Limits:RequestHeadersTimeout"] = nameof(FalconetServerOptions.RequestHeadersTimeout),
        ["Limits:MaxConcurrentConnections"] = nameof(FalconetServerOptions.MaxConnections),
        ["Limits:MaxRequestHeadersTotalSize"] = "Limits:" + nameof(Http.HttpLimits.MaxRequestHeadersSize),
        ["Limits:MaxResponseBufferSize"] = nameof(FalconetServerOptions.OutputBufferLimit),
    };

    /// <summary>Applies <paramref name="section"/> to <paramref name="options"/>: options, limits and endpoints.</summary>
    /// <exception cref="OptionsValidationException">
    /// A key names no option, a value does not convert, an endpoint does not parse, or a certificate cannot be loaded; the
    /// message gives the key's path.
    /// </exception>
    public static void Bind(IConfiguration section, FalconetServerOptions options)
    {
        ArgumentNullException.ThrowIfNull(section);
        ArgumentNullException.ThrowIfNull(options);
        var errors = new List<string>();
        EndpointDefaults defaults = ReadEndpointDefaults(section.GetSection(EndpointDefaultsKey), errors);
        if (defaults.Protocols is { } protocols)
        {
            // As Kestrel's EndpointDefaults: every endpoint's, the addresses of --urls included.
            options.Protocols = protocols;
        }

        foreach (IConfigurationSection child in section.GetChildren())
        {
            if (Is(child, nameof(FalconetServerOptions.Endpoints)))
            {
                BindEndpoints(child, options, defaults, errors);
            }
            else if (Is(child, nameof(FalconetServerOptions.Limits)))
            {
                foreach (IConfigurationSection limit in child.GetChildren())
                {
                    if (s_kestrelNames.TryGetValue("Limits:" + limit.Key, out string? name))
                    {
                        BindRenamed(limit, name, options, errors);
                    }
                    else
                    {
                        BindProperty(limit, options.Limits, errors);
                    }
                }
            }
            else if (Is(child, nameof(FalconetServerOptions.UnixSocketPermissions)))
            {
                options.UnixSocketPermissions = ReadUnixFileMode(child, errors) ?? options.UnixSocketPermissions;
            }
            else if (Is(child, CertificatesKey) || Is(child, EndpointDefaultsKey))
            {
                // Read with the HTTPS defaults (BindHttpsDefaults); EndpointDefaults also above.
            }
            else if (s_kestrelNames.TryGetValue(child.Key, out string? name))
            {
                BindRenamed(child, name, options, errors);
            }
            else
            {
                BindProperty(child, options, errors);
            }
        }

        ThrowIfAny(errors);
    }

    /// <summary>
    /// Applies the HTTPS defaults of <paramref name="section"/> to <paramref name="defaults"/>: the certificate of
    /// "Certificates:Default", and the "SslProtocols" and "ClientCertificateMode" of "EndpointDefaults". They serve https
    /// addresses given without TLS settings (ASP.NET Core's <c>--urls</c>), and lend their certificate to any HTTPS endpoint
    /// configured without one.
    /// </summary>
    /// <exception cref="OptionsValidationException">A key names nothing, or the certificate cannot be loaded; the message gives the key's path.</exception>
    public static void BindHttpsDefaults(IConfiguration section, TlsServerOptions defaults)
    {
        ArgumentNullException.ThrowIfNull(section);
        ArgumentNullException.ThrowIfNull(defaults);
        var errors = new List<string>();
        ReadEndpointDefaults(section.GetSection(EndpointDefaultsKey), errors).ApplyTo(defaults);
        foreach (IConfigurationSection certificate in section.GetSection(CertificatesKey).GetChildren())
        {
            if (Is(certificate, "Default"))
            {
                defaults.ServerCertificate = LoadCertificate(certificate, errors) ?? defaults.ServerCertificate;
            }
            else
            {
                errors.Add($"{certificate.Path}: there is no such certificate setting: name the default certificate \"{CertificatesKey}:Default\", and an endpoint's own under its \"Certificate\".");
            }
        }

        ThrowIfAny(errors);
    }

    /// <summary>
    /// The endpoint of one http address: "http://127.0.0.1:8080", "127.0.0.1:8080", "[::1]:8080", "http://localhost:8080"
    /// (the IPv4 loopback), "*:8080" (every address) or "http://unix:/run/app.sock" (a Unix domain socket).
    /// </summary>
    /// <exception cref="FormatException">Not an http address Falconet can bind.</exception>
    public static EndPoint ParseEndpoint(string text)
    {
        ListenAddress address = ListenAddress.Parse(text);
        return address.IsHttps
            ? throw new FormatException($"'{text}': an https address needs TLS settings; add it to the endpoints of the configuration or to HttpsEndpoints.")
            : address.EndPoints[0];
    }

    private static bool Is(IConfigurationSection section, string key) => string.Equals(section.Key, key, StringComparison.OrdinalIgnoreCase);

    private static void ThrowIfAny(List<string> errors)
    {
        if (errors.Count != 0)
        {
            throw new OptionsValidationException(Options.DefaultName, typeof(FalconetServerOptions), errors);
        }
    }

    private static void BindRenamed(IConfigurationSection child, string name, FalconetServerOptions options, List<string> errors)
    {
        object target = options;
        if (name.StartsWith("Limits:", StringComparison.Ordinal))
        {
            target = options.Limits;
            name = name["Limits:".Length..];
        }

        BindProperty(child, target, errors, name);
    }

    /// <summary>
    /// A file mode as chmod writes it, in octal ("660", "0660"), or as <see cref="UnixFileMode"/> names
    /// ("UserRead, UserWrite, GroupRead, GroupWrite"). A number is always octal: read as decimal, "660" would be another mode.
    /// </summary>
    private static UnixFileMode? ReadUnixFileMode(IConfigurationSection child, List<string> errors)
    {
        string text = (child.Value ?? string.Empty).Trim();
        if (text.Length != 0 && char.IsAsciiDigit(text[0]))
        {
            int mode = 0;
            foreach (char digit in text)
            {
                if (digit is < '0' or > '7' || mode > 0xFFF)
                {
                    errors.Add($"{child.Path}: '{child.Value}' is not an octal file mode such as \"660\".");
                    return null;
                }

                mode = (mode * 8) + (digit - '0');
            }

            if (mode <= 0xFFF)
            {
                return (UnixFileMode)mode;
            }

            errors.Add($"{child.Path}: '{child.Value}' is not an octal file mode such as \"660\".");
            return null;
        }

        if (text.Length != 0 && Enum.TryParse(text, ignoreCase: true, out UnixFileMode named) && ((int)named & ~0xFFF) == 0)
        {
            return named;
        }

        errors.Add($"{child.Path}: '{child.Value}' is not a file mode: write it in octal (\"660\") or as UnixFileMode names (\"UserRead, UserWrite\").");
        return null;
    }

    private static void BindProperty(IConfigurationSection child, object target, List<string> errors, string? name = null)
    {
        PropertyInfo? property = target.GetType().GetProperty(name ?? child.Key, BindingFlags.Public | BindingFlags.Instance | BindingFlags.IgnoreCase);
        if (property is null || !property.CanWrite || Array.IndexOf(s_ignored, property.Name) >= 0)
        {
            errors.Add($"{child.Path}: there is no such Falconet option (see docs/http-server.md, Options).");
            return;
        }

        try
        {
            property.SetValue(target, child.Get(property.PropertyType));
        }
        catch (InvalidOperationException exception)
        {
            errors.Add($"{child.Path}: '{child.Value}' is not a valid {Nullable.GetUnderlyingType(property.PropertyType)?.Name ?? property.PropertyType.Name} ({exception.InnerException?.Message ?? exception.Message}).");
        }
        catch (TargetInvocationException exception) when (exception.InnerException is ArgumentException refused)
        {
            // The option's own setter refused the value (a limit must be positive, say).
            errors.Add($"{child.Path}: {child.Value} is refused: {refused.Message}");
        }
    }
}
