#include "fusefs/open_handles.h"

namespace graphfs {

namespace {

template <typename T>
uint64_t AddTo(std::unordered_map<uint64_t, std::unique_ptr<T>>& table, std::unique_ptr<T> h) {
  const uint64_t fh = reinterpret_cast<uint64_t>(h.get());
  table.emplace(fh, std::move(h));
  return fh;
}

template <typename T>
std::unique_ptr<T> TakeFrom(std::unordered_map<uint64_t, std::unique_ptr<T>>& table, uint64_t fh) {
  auto it = table.find(fh);
  if (it == table.end()) return nullptr;
  std::unique_ptr<T> h = std::move(it->second);
  table.erase(it);
  return h;
}

}  // namespace

uint64_t OpenHandles::Add(std::unique_ptr<FileHandle> h) {
  std::lock_guard<std::mutex> lock(mu_);
  return AddTo(files_, std::move(h));
}

uint64_t OpenHandles::Add(std::unique_ptr<DirHandle> d) {
  std::lock_guard<std::mutex> lock(mu_);
  return AddTo(dirs_, std::move(d));
}

std::unique_ptr<FileHandle> OpenHandles::TakeFile(uint64_t fh) {
  std::lock_guard<std::mutex> lock(mu_);
  return TakeFrom(files_, fh);
}

std::unique_ptr<DirHandle> OpenHandles::TakeDir(uint64_t fh) {
  std::lock_guard<std::mutex> lock(mu_);
  return TakeFrom(dirs_, fh);
}

OpenHandles::Left OpenHandles::TakeAll() {
  std::lock_guard<std::mutex> lock(mu_);
  Left left;
  for (auto& [fh, h] : files_) left.files.push_back(std::move(h));
  for (auto& [fh, d] : dirs_) left.dirs.push_back(std::move(d));
  files_.clear();
  dirs_.clear();
  return left;
}

size_t OpenHandles::files() const {
  std::lock_guard<std::mutex> lock(mu_);
  return files_.size();
}

size_t OpenHandles::dirs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dirs_.size();
}

}  // namespace graphfs
