"""Headless Chromium (Debian's `chromium` and `chromium-driver`) driven by Selenium.

Nothing here downloads a browser or a driver: both paths are given to Selenium, so its
driver manager is never asked. Without them the tests skip with the reason, except
under CI (`.ci/run` installs them), where a missing browser fails.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.wait import WebDriverWait

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
INSTALL_HINT = "apt-get install chromium chromium-driver (.ci/run does this)"


def require_browser() -> tuple[str, str]:
    if BROWSER and DRIVER:
        return BROWSER, DRIVER
    missing = " and ".join(n for n, p in (("chromium", BROWSER), ("chromedriver", DRIVER)) if not p)
    if os.environ.get("CI"):
        pytest.fail(f"the browser test must run in CI but {missing} is missing: {INSTALL_HINT}")
    pytest.skip(f"headless Chromium is not installed ({missing} missing): {INSTALL_HINT}")


@contextmanager
def chromium() -> Iterator[WebDriver]:
    browser, driver_path = require_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI containers run as root
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1000",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


class Page:
    """What a person does and sees in the dev UI, and a screenshot when a step fails."""

    def __init__(self, driver: WebDriver, screenshots: Path) -> None:
        self.driver = driver
        self.screenshots = screenshots
        self.step = 0

    @contextmanager
    def step_named(self, name: str) -> Iterator[None]:
        self.step += 1
        try:
            yield
        except (AssertionError, WebDriverException) as exc:
            self.screenshots.mkdir(parents=True, exist_ok=True)
            shot = self.screenshots / f"{self.step:02d}-{name}.png"
            self.driver.save_screenshot(str(shot))
            raise AssertionError(f"step {name!r} failed; screenshot at {shot}: {exc}") from exc

    def text(self) -> str:
        return self.driver.find_element(By.TAG_NAME, "body").text

    def wait_for(self, predicate: Callable[[str], bool], what: str, seconds: float = 30) -> str:
        seen = ""

        def check(_: WebDriver) -> bool:
            nonlocal seen
            seen = self.text()
            return predicate(seen)

        try:
            WebDriverWait(self.driver, seconds, poll_frequency=0.2).until(check)
        except WebDriverException as exc:
            raise AssertionError(f"did not see {what} within {seconds:.0f} s") from exc
        return seen

    def wait_for_text(self, *needles: str, seconds: float = 30) -> str:
        return self.wait_for(lambda t: all(n in t for n in needles), repr(needles), seconds)

    def open(self, url: str) -> None:
        self.driver.get(url)
        self.wait_for(lambda t: "Agent Development Kit" in t, "the dev UI")
        self.dismiss_dialogs()

    def dismiss_dialogs(self) -> None:
        time.sleep(0.5)
        for button in self.driver.find_elements(By.TAG_NAME, "button"):
            if button.text.strip() == "No Thanks":
                button.click()

    def button(self, containing: str) -> None:
        buttons = self.driver.find_elements(By.TAG_NAME, "button")
        matches = [b for b in buttons if containing in b.text and b.is_displayed()]
        assert matches, f"no button showing {containing!r}"
        matches[0].click()

    def click_text(self, exact: str) -> None:
        self.driver.find_element(By.XPATH, f"//*[normalize-space(text())='{exact}']").click()

    def tab(self, name: str) -> None:
        tabs = [t for t in self.driver.find_elements(By.CSS_SELECTOR, "[role=tab]")]
        matches = [t for t in tabs if t.text.strip() == name]
        assert matches, f"no tab {name!r} among {[t.text for t in tabs]}"
        matches[0].click()

    def attach(self, path: Path) -> None:
        self.driver.find_element(By.CSS_SELECTOR, "input[type=file]").send_keys(str(path))

    def send(self, message: str) -> None:
        box = self.driver.find_element(By.TAG_NAME, "textarea")
        box.send_keys(message)
        box.send_keys(Keys.ENTER)
