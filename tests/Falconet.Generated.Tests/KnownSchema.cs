using System;
using System.Collections.Generic;
using System.IO;
using System.Text.Json;

namespace Falconet.Generated.Tests;

/// <summary>The names of the default schema (schema/known-headers.json), read once from the repository at test time.</summary>
internal static class KnownSchema
{
    private static readonly Lazy<Names> s_names = new(Load);

    public static IReadOnlyList<string> Methods => s_names.Value.Methods;

    public static IReadOnlyList<string> Versions => s_names.Value.Versions;

    public static IReadOnlyList<string> RequestHeaders => s_names.Value.RequestHeaders;

    public static IReadOnlyList<string> ResponseHeaders => s_names.Value.ResponseHeaders;

    /// <summary>Every request and response header name once, in schema order.</summary>
    public static IReadOnlyList<string> AllHeaders => s_names.Value.AllHeaders;

    private static Names Load()
    {
        string path = Path.Combine(FindRepositoryRoot(), "schema", "known-headers.json");
        using JsonDocument document = JsonDocument.Parse(File.ReadAllText(path));
        JsonElement root = document.RootElement;
        string[] request = ReadHeaderNames(root.GetProperty("requestHeaders"));
        string[] response = ReadHeaderNames(root.GetProperty("responseHeaders"));
        var all = new List<string>(request);
        foreach (string name in response)
        {
            if (!all.Exists(existing => string.Equals(existing, name, StringComparison.OrdinalIgnoreCase)))
            {
                all.Add(name);
            }
        }

        return new Names(ReadStrings(root.GetProperty("methods")), ReadStrings(root.GetProperty("versions")), request, response, all.ToArray());
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

    private sealed record Names(string[] Methods, string[] Versions, string[] RequestHeaders, string[] ResponseHeaders, string[] AllHeaders);
}
