using System;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Globalization;
using Falconet.Generator.Planning;

namespace Falconet.Generator.Schema;

/// <summary>Appends user schemas to the defaults and checks the rules that span files: duplicates, limits, member names.</summary>
internal static class SchemaMerger
{
    /// <summary>The most headers one collection can hold in its <c>ulong</c> bit set.</summary>
    public const int MaxBitHeaders = 64;

    /// <summary>
    /// Merges <paramref name="userFiles"/> into <paramref name="defaults"/>. Without <paramref name="userMethods"/> (an app's
    /// header set, whose methods and versions the runtime matches), a method or version in a user file is FALC016.
    /// </summary>
    public static SchemaResult Merge(SchemaFile defaults, ImmutableArray<SchemaFile> userFiles, bool userMethods = true)
    {
        var files = new List<SchemaFile> { defaults };
        // By file name, then by path with one separator: the same order on every machine and OS, whatever the checkout root.
        var sorted = new List<SchemaFile>(userFiles);
        sorted.Sort(static (a, b) =>
        {
            int byName = string.CompareOrdinal(FileName(a.Path), FileName(b.Path));
            return byName != 0 ? byName : string.CompareOrdinal(a.Path.Replace('\\', '/'), b.Path.Replace('\\', '/'));
        });

        // A file listed twice in AdditionalFiles is read once.
        for (int i = 0; i < sorted.Count; i++)
        {
            if (i == 0 || sorted[i].Path != sorted[i - 1].Path)
            {
                files.Add(sorted[i]);
            }
        }

        var diagnostics = new List<DiagnosticInfo>();
        foreach (SchemaFile file in files)
        {
            diagnostics.AddRange(file.Diagnostics);
        }

        if (!userMethods)
        {
            files = RefuseMethods(files, diagnostics);
        }

        // The HPACK tables are RFC 7541's: only the default schema carries them, and no user file may change them.
        for (int i = 1; i < files.Count; i++)
        {
            if (files[i].HPack is { } section)
            {
                diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.HPackInUserFile, section.Location, FileName(files[i].Path)));
            }
        }

        var methods = MergeNames(files, static f => f.Methods, "Method", MemberNames.ReservedMethodMembers, diagnostics);
        var versions = MergeNames(files, static f => f.Versions, "Version", null, diagnostics);
        var request = MergeHeaders(files, static f => f.RequestHeaders, "requestHeaders", diagnostics);
        var response = MergeHeaders(files, static f => f.ResponseHeaders, "responseHeaders", diagnostics);
        var model = new SchemaModel(EquatableArray.From(methods), EquatableArray.From(versions), EquatableArray.From(request), EquatableArray.From(response), files.Count - 1, defaults.HPack?.Model);
        return new SchemaResult(model, EquatableArray.From(diagnostics));
    }

    // Every user file without its methods and versions, each reported where it stands.
    private static List<SchemaFile> RefuseMethods(List<SchemaFile> files, List<DiagnosticInfo> diagnostics)
    {
        var kept = new List<SchemaFile> { files[0] };
        for (int i = 1; i < files.Count; i++)
        {
            SchemaFile file = files[i];
            foreach (NamedEntry method in file.Methods)
            {
                diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.RuntimeOwnsMethods, method.Location, "Method", method.Name, "a request with it arrives as KnownMethod.Custom"));
            }

            foreach (NamedEntry version in file.Versions)
            {
                diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.RuntimeOwnsMethods, version.Location, "Version", version.Name, "a request with it is answered 505"));
            }

            kept.Add(file with { Methods = EquatableArray<NamedEntry>.Empty, Versions = EquatableArray<NamedEntry>.Empty });
        }

        return kept;
    }

    private static List<string> MergeNames(
        List<SchemaFile> files,
        Func<SchemaFile, EquatableArray<NamedEntry>> select,
        string kind,
        ImmutableHashSet<string>? reserved,
        List<DiagnosticInfo> diagnostics)
    {
        // Methods and versions are case-sensitive in HTTP: "get" is not "GET" (it then clashes on the member name Get).
        var result = new List<string>();
        var seen = new Dictionary<string, LocationInfo>(StringComparer.Ordinal);
        var members = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (SchemaFile file in files)
        {
            foreach (NamedEntry entry in select(file))
            {
                if (seen.TryGetValue(entry.Name, out LocationInfo? first))
                {
                    diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.DuplicateName, entry.Location, kind, entry.Name, Where(first)));
                    continue;
                }

                string member = MemberNames.ToPascalCase(entry.Name);
                if (reserved is not null && reserved.Contains(member))
                {
                    diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.PropertyNameConflict, entry.Location, kind, entry.Name, member, "which is reserved"));
                    continue;
                }

                if (members.TryGetValue(member, out string? owner))
                {
                    diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.PropertyNameConflict, entry.Location, kind, entry.Name, member, "already taken by '" + owner + "'"));
                    continue;
                }

                seen.Add(entry.Name, entry.Location);
                members.Add(member, entry.Name);
                result.Add(entry.Name);
            }
        }

        return result;
    }

    private static List<HeaderModel> MergeHeaders(
        List<SchemaFile> files,
        Func<SchemaFile, EquatableArray<HeaderEntry>> select,
        string collection,
        List<DiagnosticInfo> diagnostics)
    {
        var result = new List<HeaderModel>();
        var seen = new Dictionary<string, (int Index, string Path, LocationInfo Location)>(StringComparer.OrdinalIgnoreCase);
        var members = new Dictionary<string, string>(StringComparer.Ordinal);
        bool hasContentLength = false;
        int bitHeaders = 0;
        int excess = 0;
        LocationInfo? firstExcess = null;
        foreach (SchemaFile file in files)
        {
            foreach (HeaderEntry entry in select(file))
            {
                if (seen.TryGetValue(entry.Name, out var first))
                {
                    if (first.Path == file.Path)
                    {
                        diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.DuplicateName, entry.Location, "Header", entry.Name, " in " + collection + Where(first.Location)));
                    }
                    else if (first.Index >= 0)
                    {
                        // A later file extends a header it did not define: more known values, or primary.
                        result[first.Index] = Extend(result[first.Index], entry);
                    }

                    continue;
                }

                if (entry.ContentLength)
                {
                    if (hasContentLength)
                    {
                        diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.ContentLengthFlag, entry.Location, entry.Name, "sets contentLength a second time in " + collection));
                        continue;
                    }

                    hasContentLength = true;
                    seen.Add(entry.Name, (result.Count, file.Path, entry.Location));
                    result.Add(new HeaderModel(entry.Name, entry.Primary, true, EquatableArray<string>.Empty, ReferenceEquals(file, files[0])));
                    continue;
                }

                string member = MemberNames.ToPascalCase(entry.Name);
                if (MemberNames.ReservedHeaderMembers.Contains(member))
                {
                    diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.PropertyNameConflict, entry.Location, "Header", entry.Name, member, "which is already a member of the collection"));
                    continue;
                }

                if (members.TryGetValue(member, out string? owner))
                {
                    diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.PropertyNameConflict, entry.Location, "Header", entry.Name, member, "already taken by '" + owner + "'"));
                    continue;
                }

                if (bitHeaders == MaxBitHeaders)
                {
                    firstExcess ??= entry.Location;
                    excess++;
                    continue;
                }

                bitHeaders++;
                seen.Add(entry.Name, (result.Count, file.Path, entry.Location));
                members.Add(member, entry.Name);
                result.Add(new HeaderModel(entry.Name, entry.Primary, false, entry.Values, ReferenceEquals(file, files[0])));
            }
        }

        if (firstExcess is not null)
        {
            diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.TooManyHeaders, firstExcess, collection, (bitHeaders + excess).ToString(CultureInfo.InvariantCulture)));
        }

        return result;
    }

    private static HeaderModel Extend(HeaderModel header, HeaderEntry extension)
    {
        if (header.ContentLength)
        {
            // Content-Length is kept as a number: known values have nothing to reuse.
            return header;
        }

        var values = new List<string>(header.Values);
        foreach (string value in extension.Values)
        {
            if (!values.Contains(value))
            {
                values.Add(value);
            }
        }

        return header with { Primary = header.Primary || extension.Primary, Values = EquatableArray.From(values) };
    }

    /// <summary>The last segment of a path written with either separator.</summary>
    internal static string FileName(string path)
    {
        int slash = Math.Max(path.LastIndexOf('/'), path.LastIndexOf('\\'));
        return path.Substring(slash + 1);
    }

    private static string Where(LocationInfo first) =>
        first.Path.Length == 0
            ? string.Empty
            : string.Format(CultureInfo.InvariantCulture, " (first at {0}({1},{2}))", first.Path, first.StartLine + 1, first.StartColumn + 1);
}
