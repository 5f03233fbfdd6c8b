using System;
using System.Collections.Generic;
using System.Net;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Falconet.Server;
using Microsoft.Extensions.Configuration;

namespace Falconet.Hosting;

// The endpoint sections, in the schema of Kestrel's: "Endpoints" (named endpoints, or a list of addresses), their
// "Certificate" and "Sni", "Certificates:Default" and "EndpointDefaults".
public static partial class FalconetConfiguration
{
    private const string CertificatesKey = "Certificates";
    private const string EndpointDefaultsKey = "EndpointDefaults";

    private static void BindEndpoints(IConfigurationSection section, FalconetServerOptions options, EndpointDefaults defaults, List<string> errors)
    {
        IEnumerable<IConfigurationSection> items = section.Value is null ? section.GetChildren() : [section];
        foreach (IConfigurationSection item in items)
        {
            if (item.Value is not null)
            {
                // An address alone: "http://127.0.0.1:8080", or https with the HTTPS defaults.
                AddEndpoint(item.Path, item.Value, options, defaults.Protocols, defaults.NewTlsOptions, errors);
            }
            else
            {
                BindNamedEndpoint(item, options, defaults, errors);
            }
        }
    }

    /// <summary>"Endpoints:{Name}": Url, Protocols, and for https SslProtocols, ClientCertificateMode, TlsEngine, Certificate and Sni.</summary>
    private static void BindNamedEndpoint(IConfigurationSection endpoint, FalconetServerOptions options, EndpointDefaults defaults, List<string> errors)
    {
        string? url = null;
        EndpointDefaults own = defaults;
        IConfigurationSection? certificate = null;
        IConfigurationSection? sni = null;
        var httpsOnly = new List<string>();
        foreach (IConfigurationSection setting in endpoint.GetChildren())
        {
            switch (setting.Key.ToUpperInvariant())
            {
                case "URL":
                    url = setting.Value;
                    break;
                case "PROTOCOLS":
                    own = own with { Protocols = ReadProtocols(setting, errors) };
                    break;
                case "SSLPROTOCOLS":
                    own = own with { SslProtocols = ReadSslProtocols(setting, errors) };
                    httpsOnly.Add(setting.Path);
                    break;
                case "CLIENTCERTIFICATEMODE":
                    own = own with { ClientCertificateMode = ReadClientCertificateMode(setting, errors) };
                    httpsOnly.Add(setting.Path);
                    break;
                case "TLSENGINE":
                    own = own with { TlsEngine = ReadTlsEngine(setting, errors) };
                    httpsOnly.Add(setting.Path);
                    break;
                case "CERTIFICATE":
                    certificate = setting;
                    httpsOnly.Add(setting.Path);
                    break;
                case "SNI":
                    sni = setting;
                    httpsOnly.Add(setting.Path);
                    break;
                default:
                    errors.Add($"{setting.Path}: there is no such endpoint setting (Url, Protocols, SslProtocols, ClientCertificateMode, TlsEngine, Certificate, Sni).");
                    break;
            }
        }

        if (string.IsNullOrWhiteSpace(url))
        {
            errors.Add($"{endpoint.Path}:Url is missing: give the address, such as \"https://*:8443\".");
            return;
        }

        AddEndpoint(endpoint.Path + ":Url", url, options, own.Protocols, () =>
        {
            TlsServerOptions tls = own.NewTlsOptions();
            if (certificate is not null)
            {
                tls.ServerCertificate = LoadCertificate(certificate, errors);
            }

            if (sni is not null)
            {
                tls.ServerCertificateSelector = ReadSni(sni, tls.ServerCertificate, errors);
            }

            return tls;
        }, errors, httpsOnly);
    }

    private static void AddEndpoint(string path, string url, FalconetServerOptions options, HttpProtocols? protocols, Func<TlsServerOptions> tls,
        List<string> errors, List<string>? httpsOnly = null)
    {
        ListenAddress address;
        try
        {
            address = ListenAddress.Parse(url);
        }
        catch (FormatException exception)
        {
            errors.Add($"{path}: {exception.Message}");
            return;
        }

        if (!address.IsHttps)
        {
            foreach (string setting in httpsOnly ?? [])
            {
                errors.Add($"{setting}: applies to https endpoints only, and '{url}' is http.");
            }

            foreach (EndPoint endPoint in address.EndPoints)
            {
                if (protocols is { } served && endPoint is IPEndPoint ip)
                {
                    options.Endpoints.Add(new HttpEndpoint(ip.Address, ip.Port, served));
                }
                else if (protocols is { } unixServed && unixServed != options.Protocols)
                {
                    errors.Add($"{path}: an endpoint of its own Protocols is an IP endpoint; a Unix socket serves Falconet:EndpointDefaults:Protocols.");
                    return;
                }
                else
                {
                    options.Endpoints.Add(endPoint);
                }
            }

            return;
        }

        TlsServerOptions settings = tls();
        foreach (EndPoint endPoint in address.EndPoints)
        {
            options.HttpsEndpoints.Add(new HttpsEndpoint(endPoint, settings) { Protocols = protocols });
        }
    }

    /// <summary>
    /// "Sni": a certificate per host name the client sends, "*.example.org" for its subdomains (the longest such suffix wins),
    /// "*" for any other name; a client that sends no name, or a name nothing matches, gets the endpoint's own certificate when
    /// it has one, else the handshake is refused (unrecognized_name).
    /// </summary>
    private static Func<string?, X509Certificate2?> ReadSni(IConfigurationSection section, X509Certificate2? fallback, List<string> errors)
    {
        var exact = new Dictionary<string, X509Certificate2>(StringComparer.OrdinalIgnoreCase);
        var wildcards = new List<KeyValuePair<string, X509Certificate2>>();
        X509Certificate2? any = null;
        foreach (IConfigurationSection host in section.GetChildren())
        {
            X509Certificate2? certificate = null;
            foreach (IConfigurationSection setting in host.GetChildren())
            {
                if (Is(setting, "Certificate"))
                {
                    certificate = LoadCertificate(setting, errors);
                }
                else if (setting.Key.ToUpperInvariant() is "SSLPROTOCOLS" or "CLIENTCERTIFICATEMODE" or "PROTOCOLS")
                {
                    errors.Add($"{setting.Path}: Falconet takes this setting per endpoint, not per host name; set it on the endpoint.");
                }
                else
                {
                    errors.Add($"{setting.Path}: there is no such setting for a host name (Certificate).");
                }
            }

            if (certificate is null)
            {
                errors.Add($"{host.Path}:Certificate is missing: a host name needs its certificate.");
            }
            else if (host.Key == "*")
            {
                any = certificate;
            }
            else if (host.Key.StartsWith("*.", StringComparison.Ordinal))
            {
                wildcards.Add(new(host.Key[1..], certificate));
            }
            else
            {
                exact[host.Key] = certificate;
            }
        }

        // Longest suffix first, so the most specific wildcard wins.
        wildcards.Sort(static (a, b) => b.Key.Length.CompareTo(a.Key.Length));
        KeyValuePair<string, X509Certificate2>[] suffixes = wildcards.ToArray();
        return hostName =>
        {
            if (hostName is null)
            {
                return fallback ?? any;
            }

            if (exact.TryGetValue(hostName, out X509Certificate2? match))
            {
                return match;
            }

            foreach (KeyValuePair<string, X509Certificate2> suffix in suffixes)
            {
                if (hostName.EndsWith(suffix.Key, StringComparison.OrdinalIgnoreCase) && hostName.Length > suffix.Key.Length)
                {
                    return suffix.Value;
                }
            }

            return any ?? fallback;
        };
    }

    /// <summary>A "Certificate" section: Path (and KeyPath, Password), or Subject and Store (and Location, AllowInvalid).</summary>
    private static X509Certificate2? LoadCertificate(IConfigurationSection section, List<string> errors)
    {
        string? path = null, keyPath = null, password = null, subject = null, store = null, location = null, allowInvalid = null;
        foreach (IConfigurationSection setting in section.GetChildren())
        {
            switch (setting.Key.ToUpperInvariant())
            {
                case "PATH": path = setting.Value; break;
                case "KEYPATH": keyPath = setting.Value; break;
                case "PASSWORD": password = setting.Value; break;
                case "SUBJECT": subject = setting.Value; break;
                case "STORE": store = setting.Value; break;
                case "LOCATION": location = setting.Value; break;
                case "ALLOWINVALID": allowInvalid = setting.Value; break;
                default:
                    errors.Add($"{setting.Path}: there is no such certificate setting (Path, KeyPath, Password, or Subject, Store, Location, AllowInvalid).");
                    break;
            }
        }

        try
        {
            if (path is not null && subject is null)
            {
                return CertificateLoader.LoadFromFile(path, keyPath, password);
            }

            if (subject is not null && path is null && store is not null)
            {
                StoreLocation storeLocation = StoreLocation.CurrentUser;
                if (location is not null && !Enum.TryParse(location, ignoreCase: true, out storeLocation))
                {
                    errors.Add($"{section.Path}:Location: '{location}' is not a store location (CurrentUser or LocalMachine).");
                    return null;
                }

                bool invalidAllowed = false;
                if (allowInvalid is not null && !bool.TryParse(allowInvalid, out invalidAllowed))
                {
                    errors.Add($"{section.Path}:AllowInvalid: '{allowInvalid}' is not true or false.");
                    return null;
                }

                return CertificateLoader.LoadFromStore(subject, store, storeLocation, invalidAllowed);
            }
        }
        catch (InvalidOperationException exception)
        {
            errors.Add($"{section.Path}: {exception.Message}");
            return null;
        }

        errors.Add($"{section.Path}: name a certificate file (Path, with KeyPath for a PEM key of its own) or a store certificate (Subject and Store).");
        return null;
    }

    private static EndpointDefaults ReadEndpointDefaults(IConfigurationSection section, List<string> errors)
    {
        var defaults = new EndpointDefaults(null, null, null, null);
        foreach (IConfigurationSection setting in section.GetChildren())
        {
            switch (setting.Key.ToUpperInvariant())
            {
                case "PROTOCOLS":
                    defaults = defaults with { Protocols = ReadProtocols(setting, errors) };
                    break;
                case "SSLPROTOCOLS":
                    defaults = defaults with { SslProtocols = ReadSslProtocols(setting, errors) };
                    break;
                case "CLIENTCERTIFICATEMODE":
                    defaults = defaults with { ClientCertificateMode = ReadClientCertificateMode(setting, errors) };
                    break;
                case "TLSENGINE":
                    defaults = defaults with { TlsEngine = ReadTlsEngine(setting, errors) };
                    break;
                default:
                    errors.Add($"{setting.Path}: there is no such endpoint default (Protocols, SslProtocols, ClientCertificateMode, TlsEngine).");
                    break;
            }
        }

        return defaults;
    }

    /// <summary>
    /// "Protocols", as Kestrel names them: Http1, Http2 (on plain HTTP: prior knowledge, as gRPC clients use), Http1AndHttp2;
    /// HTTP/3 fails the start.
    /// </summary>
    private static HttpProtocols? ReadProtocols(IConfigurationSection setting, List<string> errors)
    {
        switch (setting.Value?.Trim().ToUpperInvariant())
        {
            case "HTTP1":
                return HttpProtocols.Http1;
            case "HTTP2":
                return HttpProtocols.Http2;
            case "HTTP1ANDHTTP2":
                return HttpProtocols.Http1AndHttp2;
            default:
                errors.Add($"{setting.Path} is '{setting.Value}': Falconet serves Http1, Http2 and Http1AndHttp2 (no HTTP/3).");
                return null;
        }
    }

    /// <summary>"SslProtocols": a list (["Tls12", "Tls13"]) or one value ("Tls13", "None" for the system's choice).</summary>
    private static SslProtocols? ReadSslProtocols(IConfigurationSection setting, List<string> errors)
    {
        var values = new List<string>();
        if (setting.Value is not null)
        {
            values.AddRange(setting.Value.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries));
        }
        else
        {
            foreach (IConfigurationSection item in setting.GetChildren())
            {
                values.Add(item.Value ?? string.Empty);
            }
        }

        SslProtocols protocols = SslProtocols.None;
        foreach (string value in values)
        {
            if (!Enum.TryParse(value, ignoreCase: true, out SslProtocols protocol) || !Enum.IsDefined(protocol))
            {
                errors.Add($"{setting.Path}: '{value}' is not a TLS version (Tls12, Tls13, or None for the system's choice).");
                return null;
            }

            protocols |= protocol;
        }

        return protocols;
    }

    private static ClientCertificateMode? ReadClientCertificateMode(IConfigurationSection setting, List<string> errors)
    {
        if (Enum.TryParse(setting.Value, ignoreCase: true, out ClientCertificateMode mode) && Enum.IsDefined(mode))
        {
            return mode;
        }

        errors.Add($"{setting.Path}: '{setting.Value}' is not served: use NoCertificate, AllowCertificate or RequireCertificate"
            + (string.Equals(setting.Value, "DelayCertificate", StringComparison.OrdinalIgnoreCase) ? " (Falconet does not renegotiate)." : "."));
        return null;
    }

    /// <summary>"TlsEngine": Auto, OpenSsl or SslStream (TlsServerOptions.Engine; Auto when left out).</summary>
    private static TlsEngine? ReadTlsEngine(IConfigurationSection setting, List<string> errors)
    {
        if (Enum.TryParse(setting.Value, ignoreCase: true, out TlsEngine engine) && Enum.IsDefined(engine) && !int.TryParse(setting.Value, out _))
        {
            return engine;
        }

        errors.Add($"{setting.Path}: '{setting.Value}' is not a TLS engine: use Auto, OpenSsl or SslStream.");
        return null;
    }

    /// <summary>TLS settings an endpoint takes when it does not give them itself ("EndpointDefaults"); null leaves the option's default.</summary>
    private sealed record EndpointDefaults(HttpProtocols? Protocols, SslProtocols? SslProtocols, ClientCertificateMode? ClientCertificateMode,
        TlsEngine? TlsEngine)
    {
        public TlsServerOptions NewTlsOptions()
        {
            var tls = new TlsServerOptions();
            ApplyTo(tls);
            return tls;
        }

        public void ApplyTo(TlsServerOptions tls)
        {
            if (SslProtocols is { } protocols)
            {
                tls.EnabledProtocols = protocols;
            }

            if (ClientCertificateMode is { } mode)
            {
                tls.ClientCertificateMode = mode;
            }

            if (TlsEngine is { } engine)
            {
                tls.Engine = engine;
            }
        }
    }
}
