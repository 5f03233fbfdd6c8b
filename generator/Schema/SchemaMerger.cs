using System;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Globalization;
using Falconet.Generator.Planning;

namespace Falconet.Generator.Schema;

/// <summary>Appends user schemas to the defaults and checks the rules that span files: duplicates, limits, member names.</summary>
public static class SchemaMerger
{
    /// <summary>The most headers one collection can hold in its <c>ulong</c> bit set.</summary>
    public const int MaxBitHeaders = 64;

    public static SchemaResult Merge(SchemaFile defaults, ImmutableArray<SchemaFile> userFiles)
    {
        var files = new List<SchemaFile> { defaults };
        var sorted = new List<SchemaFile>(userFiles);
        sorted.Sort(static (a, b) => string.CompareOrdinal(a.Path, b.Path));
        files.AddRange(sorted);

        var diagnostics = new List<DiagnosticInfo>();
        foreach (SchemaFile file in files)
        {
            diagnostics.AddRange(file.Diagnostics);
        }

        var methods = MergeNames(files, static f => f.Methods, "Method", MemberNames.ReservedMethodMembers, diagnostics);
        var versions = MergeNames(files, static f => f.Versions, "Version", null, diagnostics);
        var request = MergeHeaders(files, static f => f.RequestHeaders, "requestHeaders", diagnostics);
        var response = MergeHeaders(files, static f => f.ResponseHeaders, "responseHeaders", diagnostics);
        var model = new SchemaModel(EquatableArray.From(methods), EquatableArray.From(versions), EquatableArray.From(request), EquatableArray.From(response));
        return new SchemaResult(model, EquatableArray.From(diagnostics));
    }

    private static List<string> MergeNames(
        List<SchemaFile> files,
        Func<SchemaFile, EquatableArray<NamedEntry>> select,
        string kind,
        ImmutableHashSet<string>? reserved,
        List<DiagnosticInfo> diagnostics)
    {
        var result = new List<string>();
        var seen = new Dictionary<string, LocationInfo>(StringComparer.OrdinalIgnoreCase);
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
        var seen = new Dictionary<string, LocationInfo>(StringComparer.OrdinalIgnoreCase);
        var members = new Dictionary<string, string>(StringComparer.Ordinal);
        bool hasContentLength = false;
        int bitHeaders = 0;
        int excess = 0;
        LocationInfo? firstExcess = null;
        foreach (SchemaFile file in files)
        {
            foreach (HeaderEntry entry in select(file))
            {
                if (seen.TryGetValue(entry.Name, out LocationInfo? first))
                {
                    diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.DuplicateName, entry.Location, "Header", entry.Name, " in " + collection + Where(first)));
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
                    seen.Add(entry.Name, entry.Location);
                    result.Add(new HeaderModel(entry.Name, entry.Primary, true, EquatableArray<string>.Empty));
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
                seen.Add(entry.Name, entry.Location);
                members.Add(member, entry.Name);
                result.Add(new HeaderModel(entry.Name, entry.Primary, false, entry.Values));
            }
        }

        if (firstExcess is not null)
        {
            diagnostics.Add(DiagnosticInfo.Create(DiagnosticDescriptors.TooManyHeaders, firstExcess, collection, (bitHeaders + excess).ToString(CultureInfo.InvariantCulture)));
        }

        return result;
    }

    private static string Where(LocationInfo first) =>
        first.Path.Length == 0
            ? string.Empty
            : string.Format(CultureInfo.InvariantCulture, " (first at {0}({1},{2}))", first.Path, first.StartLine + 1, first.StartColumn + 1);
}
