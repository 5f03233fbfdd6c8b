using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net;
using System.Reflection;
using Falconet.Http;
using Falconet.Server;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;

namespace Falconet.Hosting;

/// <summary>
/// Reads <see cref="FalconetServerOptions"/> from a configuration section (appsettings.json "Falconet", environment
/// variables Falconet__KeepAliveTimeout, ...). Every key must name an option: a typo fails the start with its path.
/// </summary>
/// <remarks>
/// <code>
/// "Falconet": {
///   "Endpoints": [ "http://127.0.0.1:8080", "[::]:8081" ],
///   "Transport": "Sockets",
///   "KeepAliveTimeout": "00:02:10",
///   "Limits": { "MaxRequestBodySize": 1048576 }
/// }
/// </code>
/// </remarks>
public static class FalconetConfiguration
{
    // What configuration can set: the public settable options of simple types, Limits and Endpoints.
    private static readonly string[] s_ignored = [nameof(FalconetServerOptions.TransportFactory), nameof(FalconetServerOptions.LoggerFactory)];

    /// <summary>Applies <paramref name="section"/> to <paramref name="options"/>.</summary>
    /// <exception cref="OptionsValidationException">A key names no option, a value does not convert, or an endpoint does not parse; the message gives the key's path.</exception>
    public static void Bind(IConfiguration section, FalconetServerOptions options)
    {
        ArgumentNullException.ThrowIfNull(section);
        ArgumentNullException.ThrowIfNull(options);
        var errors = new List<string>();
        foreach (IConfigurationSection child in section.GetChildren())
        {
            string path = child is IConfigurationSection { Path: { } p } ? p : child.Key;
            if (string.Equals(child.Key, nameof(FalconetServerOptions.Endpoints), StringComparison.OrdinalIgnoreCase))
            {
                BindEndpoints(child, options, errors);
            }
            else if (string.Equals(child.Key, nameof(FalconetServerOptions.Limits), StringComparison.OrdinalIgnoreCase))
            {
                BindProperties(child, options.Limits, errors);
            }
            else
            {
                BindProperty(child, path, options, errors);
            }
        }

        if (errors.Count != 0)
        {
            throw new OptionsValidationException(Options.DefaultName, typeof(FalconetServerOptions), errors);
        }
    }

    /// <summary>"http://127.0.0.1:8080", "127.0.0.1:8080", "[::1]:8080", "http://localhost:8080" (IPv4 loopback) or "*:8080" (every address).</summary>
    public static IPEndPoint ParseEndpoint(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        string value = text.Trim();
        if (value.StartsWith("http://", StringComparison.OrdinalIgnoreCase))
        {
            value = value["http://".Length..].TrimEnd('/');
        }
        else if (value.Contains("://", StringComparison.Ordinal))
        {
            throw new FormatException($"'{text}': only http:// endpoints are served.");
        }

        int colon = value.LastIndexOf(':');
        if (colon > 0 && int.TryParse(value.AsSpan(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out int port) && port <= IPEndPoint.MaxPort)
        {
            string host = value[..colon];
            if (host is "*" or "+")
            {
                return new IPEndPoint(IPAddress.IPv6Any, port);
            }

            if (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase))
            {
                return new IPEndPoint(IPAddress.Loopback, port);
            }
        }

        if (IPEndPoint.TryParse(value, out IPEndPoint? endpoint) && value.Contains(':', StringComparison.Ordinal))
        {
            return endpoint;
        }

        throw new FormatException($"'{text}' is not an endpoint: write an IP address and a port, such as \"http://127.0.0.1:8080\" or \"[::]:8080\".");
    }

    private static void BindEndpoints(IConfigurationSection section, FalconetServerOptions options, List<string> errors)
    {
        IEnumerable<IConfigurationSection> items = section.Value is null ? section.GetChildren() : [section];
        foreach (IConfigurationSection item in items)
        {
            try
            {
                options.Endpoints.Add(ParseEndpoint(item.Value ?? string.Empty));
            }
            catch (FormatException exception)
            {
                errors.Add($"{item.Path}: {exception.Message}");
            }
        }
    }

    private static void BindProperties(IConfigurationSection section, object target, List<string> errors)
    {
        foreach (IConfigurationSection child in section.GetChildren())
        {
            BindProperty(child, child.Path, target, errors);
        }
    }

    private static void BindProperty(IConfigurationSection child, string path, object target, List<string> errors)
    {
        PropertyInfo? property = target.GetType().GetProperty(child.Key, BindingFlags.Public | BindingFlags.Instance | BindingFlags.IgnoreCase);
        if (property is null || !property.CanWrite || Array.IndexOf(s_ignored, property.Name) >= 0)
        {
            errors.Add($"{path}: there is no such Falconet option (see docs/http-server.md, Options).");
            return;
        }

        try
        {
            property.SetValue(target, child.Get(property.PropertyType));
        }
        catch (InvalidOperationException exception)
        {
            errors.Add($"{path}: '{child.Value}' is not a valid {Nullable.GetUnderlyingType(property.PropertyType)?.Name ?? property.PropertyType.Name} ({exception.InnerException?.Message ?? exception.Message}).");
        }
        catch (TargetInvocationException exception) when (exception.InnerException is ArgumentException refused)
        {
            // The option's own setter refused the value (a limit must be positive, say).
            errors.Add($"{path}: {child.Value} is refused: {refused.Message}");
        }
    }
}
