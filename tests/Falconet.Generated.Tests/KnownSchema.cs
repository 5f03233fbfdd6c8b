using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Text.Json;

namespace Falconet.Generated.Tests;

/// <summary>
/// The names of the default schema (schema/known-headers.json), read once from the repository at test time, and of the
/// app's header set of this test project (the defaults, then app.headers.json).
/// </summary>
internal static class KnownSchema
{
    private static readonly Lazy<Names> s_names = new(Load);

    public static IReadOnlyList<string> Methods => s_names.Value.Methods;

    public static IReadOnlyList<string> Versions => s_names.Value.Versions;

    public static IReadOnlyList<string> RequestHeaders => s_names.Value.RequestHeaders;

    public static IReadOnlyList<string> ResponseHeaders => s_names.Value.ResponseHeaders;

    /// <summary>The request headers of the app's set: the defaults, then the new names of app.headers.json.</summary>
    public static IReadOnlyList<string> AppRequestHeaders => s_names.Value.AppRequestHeaders;

    /// <summary>The response headers of the app's set: the defaults, then the new names of app.headers.json.</summary>
    public static IReadOnlyList<string> AppResponseHeaders => s_names.Value.AppResponseHeaders;

    /// <summary>Every request and response header name once, in schema order, the app's after the defaults.</summary>
    public static IReadOnlyList<string> AllHeaders => s_names.Value.AllHeaders;

    private static Names Load()
    {
        string path = Path.Combine(FindRepositoryRoot(), "schema", "known-headers.json");
        using JsonDocument document = JsonDocument.Parse(File.ReadAllText(path));
        JsonElement root = document.RootElement;
        string[] request = ReadHeaderNames(root.GetProperty("requestHeaders"));
        string[] response = ReadHeaderNames(root.GetProperty("responseHeaders"));

        string appPath = typeof(KnownSchema).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "AppSchema").Value!;
        using JsonDocument app = JsonDocument.Parse(File.ReadAllText(appPath));
        string[] appRequest = Union(request, ReadHeaderNames(app.RootElement.GetProperty("requestHeaders")));
        string[] appResponse = Union(response, ReadHeaderNames(app.RootElement.GetProperty("responseHeaders")));
        string[] all = Union(Union(request, response), Union(appRequest, appResponse));
        return new Names(ReadStrings(root.GetProperty("methods")), ReadStrings(root.GetProperty("versions")), request, response, appRequest, appResponse, all);
    }

    // The first list, then the names of the second that it lacks in any letter case (a file naming a default extends it).
    private static string[] Union(string[] first, string[] second)
    {
        var all = new List<string>(first);
        foreach (string name in second)
        {
            if (!all.Exists(existing => string.Equals(existing, name, StringComparison.OrdinalIgnoreCase)))
            {
                all.Add(name);
            }
        }

        return all.ToArray();
    }

    private static string FindRepositoryRoot()
    {
        for (DirectoryInfo? directory = new(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "Falconet.slnx"))
                || File.Exists(Path.Combine(directory.FullName, "schema", "known-headers.json")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException("No folder above " + AppContext.BaseDirectory + " holds Falconet.slnx or schema/known-headers.json.");
    }

    private static string[] ReadHeaderNames(JsonElement headers)
    {
        var names = new string[headers.GetArrayLength()];
        int i = 0;
        foreach (JsonElement header in headers.EnumerateArray())
        {
            names[i++] = header.GetProperty("name").GetString()!;
        }

        return names;
    }

    private static string[] ReadStrings(JsonElement array)
    {
        var values = new string[array.GetArrayLength()];
        int i = 0;
        foreach (JsonElement value in array.EnumerateArray())
        {
            values[i++] = value.GetString()!;
        }

        return values;
    }

    private sealed record Names(string[] Methods, string[] Versions, string[] RequestHeaders, string[] ResponseHeaders,
        string[] AppRequestHeaders, string[] AppResponseHeaders, string[] AllHeaders);
}
